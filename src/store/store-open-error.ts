/**
 * A store that cannot be opened for a reason a person can fix: the data directory cannot be made or
 * written, another process holds it, or a file of it is damaged. The message says what is wrong and what
 * to do; a face shows it as it is (no stack trace), the stdio MCP server in every tool result.
 */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}

const ACCESS_CODES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EEXIST: 'it is a file, not a directory',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
};

/** The StoreOpenError for a file-system error on the data directory, or undefined for any other error. */
export function dataDirAccessError(dataDir: string, err: unknown): StoreOpenError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const reason = code === undefined ? undefined : ACCESS_CODES[code];
  if (reason === undefined) return undefined;
  return new StoreOpenError(
    `The data directory ${dataDir} cannot be used (${code}: ${reason}). Set DATA_DIR to a directory this ` +
      'user can write; for a desktop client, in the "env" of its entry (agent-context setup <client> ' +
      '--data-dir <dir> --write does it).',
  );
}
