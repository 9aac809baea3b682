/**
 * `setup --write`: merges one server entry into a client's configuration file. A missing file is created
 * (with its directories); an existing one is edited in place by jsonc-edit, keeping every other byte, after
 * a backup of it is written beside it. The same entry twice changes nothing. A file that does not parse, or
 * whose server table is not an object, is refused untouched with a sentence saying what to fix.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, copyFile, mkdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type ParseError, parse, printParseErrorCode } from 'jsonc-parser';
import { setServerEntry } from './jsonc-edit.js';
import { SetupError } from './setup-error.js';

export interface MergeRequest {
  file: string;
  /** `mcpServers`, or `servers` for VS Code. */
  containerKey: string;
  name: string;
  entry: unknown;
  /** The clock that names backups. */
  now?: () => Date;
}

export type MergeStatus = 'created' | 'added' | 'updated' | 'unchanged';

export interface MergeOutcome {
  status: MergeStatus;
  file: string;
  /** The copy of the previous file, when an existing file was changed. */
  backup?: string;
}

/** The new text for an existing file, or 'unchanged'; throws SetupError for a file it must not touch. */
export type MergePlan = { status: 'unchanged' } | { status: 'added' | 'updated'; text: string };

const BOM = '\uFEFF';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Structural equality of JSON values; key order does not matter. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameJson(x, b[i]))
    );
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return a === b;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function position(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/** Decides what an existing file becomes. `text` is the file's content without a byte-order mark. */
export function planMerge(
  file: string,
  text: string,
  request: Omit<MergeRequest, 'file' | 'now'>,
): MergePlan {
  const { containerKey, name, entry } = request;
  if (text.trim() === '') {
    return { status: 'added', text: `${JSON.stringify({ [containerKey]: { [name]: entry } }, null, 2)}\n` };
  }
  const errors: ParseError[] = [];
  const root: unknown = parse(text, errors, { allowTrailingComma: true, allowEmptyContent: true });
  const [error] = errors;
  if (error !== undefined) {
    throw new SetupError(
      `${file} is not valid JSON (${printParseErrorCode(error.error)} at ${position(text, error.offset)}). ` +
        'Fix it, or move it aside, and run setup again; it was left unchanged.',
    );
  }
  if (root !== undefined && !isObject(root)) {
    throw new SetupError(
      `${file} holds ${describe(root)}, but a configuration file must hold a JSON object ({ ... }). ` +
        'Fix it, or move it aside, and run setup again; it was left unchanged.',
    );
  }
  const container = root?.[containerKey];
  if (container !== undefined && !isObject(container)) {
    throw new SetupError(
      `"${containerKey}" in ${file} is ${describe(container)}, but it must be an object of servers ` +
        `("${containerKey}": { ... }). Fix it and run setup again; the file was left unchanged.`,
    );
  }
  if (container !== undefined && name in container && sameJson(container[name], entry))
    return { status: 'unchanged' };
  const status = container !== undefined && name in container ? 'updated' : 'added';
  return { status, text: setServerEntry(text, containerKey, name, entry) };
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Copies the file to `<file>.backup-<ISO time without colons>`, never over an earlier backup. */
async function backUp(file: string, now: Date): Promise<string> {
  const stem = `${file}.backup-${now.toISOString().replace(/:/g, '')}`;
  for (let n = 1; ; n++) {
    const backup = n === 1 ? stem : `${stem}-${n}`;
    try {
      await copyFile(file, backup, constants.COPYFILE_EXCL);
      return backup;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 100) throw err;
    }
  }
}

/**
 * Replaces the file's content through a temporary file and a rename (never a half-written file), keeping
 * its permissions and writing through a symlink to its target. Returns false, writing nothing, if the file
 * no longer holds `expected`: the client rewrote it meanwhile.
 */
async function replaceIfUnchanged(file: string, expected: string, text: string): Promise<boolean> {
  const target = await realpath(file);
  const mode = (await stat(target)).mode & 0o7777;
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${randomUUID()}.tmp`);
  await writeFile(temp, text, { mode });
  try {
    await chmod(temp, mode);
    if ((await readFile(file, 'utf8')) !== expected) return false;
    await rename(temp, target);
    return true;
  } finally {
    await rm(temp, { force: true });
  }
}

/** Merges the entry into the file; see the module header. */
export async function mergeServerEntry(request: MergeRequest): Promise<MergeOutcome> {
  const { file, containerKey, name, entry } = request;
  const now = request.now ?? (() => new Date());
  for (let attempt = 0; attempt < 3; attempt++) {
    const original = await readIfExists(file);
    if (original === undefined) {
      await mkdir(path.dirname(file), { recursive: true });
      const text = `${JSON.stringify({ [containerKey]: { [name]: entry } }, null, 2)}\n`;
      try {
        await writeFile(file, text, { flag: 'wx' });
        return { status: 'created', file };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue; // created meanwhile: merge into it
        throw err;
      }
    }
    const bom = original.startsWith(BOM) ? BOM : '';
    const plan = planMerge(file, original.slice(bom.length), { containerKey, name, entry });
    if (plan.status === 'unchanged') return { status: 'unchanged', file };
    const backup = await backUp(file, now());
    if (await replaceIfUnchanged(file, original, bom + plan.text))
      return { status: plan.status, file, backup };
    await rm(backup, { force: true });
  }
  throw new SetupError(
    `${file} kept changing while setup was editing it. Quit the client that writes it and run setup again.`,
  );
}
