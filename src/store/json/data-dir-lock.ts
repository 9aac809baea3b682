/**
 * One writer per DATA_DIR. A lock file, created exclusively, names the process that holds it; a second
 * process is refused with that name. A lock left by a dead process (or a zombie awaiting its reaper) is
 * taken over: the stale file is renamed aside atomically and checked before a new lock is created.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { StoreOpenError } from '../store-open-error.js';

export const LOCK_FILE = 'agent-context.lock';

/** Who holds the lock, written into the lock file and shown to a refused process. */
export interface LockHolder {
  pid: number;
  /** What the holder runs, e.g. `serve` or `mcp`. */
  command: string;
  /** Where the holder serves, when it does (e.g. `http://127.0.0.1:8787`). */
  url?: string;
  startedAt: string;
}

export class DataDirLockedError extends StoreOpenError {
  override name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    const where = holder.url ? ` at ${holder.url}` : '';
    super(
      `DATA_DIR ${dataDir} is in use by agent-context ${holder.command} (pid ${holder.pid}${where}, ` +
        `since ${holder.startedAt}). Only one process may write a store: ${lockedHint(holder)}`,
    );
  }
}

/** The holder's URL as another process on this host reaches it (a server on every interface, on loopback). */
export function reachableUrl(holderUrl: string): string {
  const url = new URL(holderUrl);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.origin;
}

/** What to do about a store another process holds: the one place this advice is written. */
function lockedHint(holder: LockHolder): string {
  if (holder.url) {
    return (
      'stop it, use another DATA_DIR, or go through it: "agent-context mcp" connects to it by itself, REST ' +
      `is at ${holder.url}/api/ac/, and "credits add" and "accounts plan" use its admin routes when ` +
      "AC_ADMIN_TOKEN is set to the server's admin token."
    );
  }
  return (
    "stop it (if it is an MCP client's stdio server, close that client), use another DATA_DIR, or start " +
    '"agent-context serve" before your MCP clients, so that they all share the store through it.'
  );
}

/** True when `pid` is a live process (a zombie counts as dead). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return !/^State:\s+Z/mu.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return true; // no /proc: trust kill(pid, 0)
  }
}

async function readHolder(file: string): Promise<LockHolder | undefined> {
  try {
    const holder = JSON.parse(await readFile(file, 'utf8')) as LockHolder;
    return typeof holder.pid === 'number' ? holder : undefined;
  } catch {
    return undefined; // missing, or half-written by a process that died while creating it
  }
}

/**
 * Writes `holder` whole into a temporary file beside `file`, so that `file` itself never shows a reader an
 * empty or half-written holder: it is created by a hard link (atomic, and refused when it exists) and
 * replaced by a rename.
 */
async function writeTemporary(file: string, holder: LockHolder): Promise<string> {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(JSON.stringify(holder));
    await handle.datasync();
  } finally {
    await handle.close();
  }
  return temp;
}

/** Creates the lock file with `holder` in it; EEXIST when a lock exists. */
async function createHolder(file: string, holder: LockHolder): Promise<void> {
  const temp = await writeTemporary(file, holder);
  try {
    await link(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}

async function replaceHolder(file: string, holder: LockHolder): Promise<void> {
  await rename(await writeTemporary(file, holder), file);
}

/** Who holds the lock of `dataDir` now, if anyone (a dead holder included). */
export function readLockHolder(dataDir: string): Promise<LockHolder | undefined> {
  return readHolder(path.join(dataDir, LOCK_FILE));
}

export interface DataDirLock {
  /** Rewrites the holder, e.g. once the server knows its URL. */
  update(holder: LockHolder): Promise<void>;
  release(): Promise<void>;
}

export async function acquireDataDirLock(dataDir: string, holder: LockHolder): Promise<DataDirLock> {
  const file = path.join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await createHolder(file, holder);
      let released = false;
      return {
        update: (next) => replaceHolder(file, next),
        release: async () => {
          if (released) return;
          released = true;
          await rm(file, { force: true });
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const current = await readHolder(file);
    if (current && current.pid !== process.pid && isProcessAlive(current.pid)) {
      throw new DataDirLockedError(dataDir, current);
    }
    await takeOverStale(file, current);
  }
  throw new Error(`Could not take the lock ${file}; another process keeps taking it. Try again.`);
}

/** Moves a stale lock aside; if what was moved turns out to be a live lock, puts it back. */
async function takeOverStale(file: string, stale: LockHolder | undefined): Promise<void> {
  const aside = `${file}.stale.${process.pid}.${Date.now()}`;
  try {
    await rename(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // someone else moved it: retry
    throw err;
  }
  const moved = await readHolder(aside);
  if (moved && moved.pid !== stale?.pid && moved.pid !== process.pid && isProcessAlive(moved.pid)) {
    await link(aside, file).catch(() => undefined); // a fresh lock: restore it unless another exists
  }
  await rm(aside, { force: true });
}
