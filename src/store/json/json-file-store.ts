/**
 * The JSON file store in DATA_DIR, readable by a person: `agent-context.json`, a snapshot that lowdb reads
 * and writes (durably, through DurableJsonFile), and `agent-context.journal`, the JSON-lines write-ahead
 * journal of every transaction since that snapshot. A write costs one appended line, group-committed;
 * the journal is folded into a new snapshot when it grows past a bound and at clean shutdown. On start
 * the snapshot is loaded and the journal replayed. A lock keeps it to one writing process.
 */
import { chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Low } from 'lowdb';
import { dataDirAccessError, StoreOpenError } from '../store-open-error.js';
import { acquireDataDirLock, type DataDirLock, LOCK_FILE, type LockHolder } from './data-dir-lock.js';
import { DurableJsonFile, syncDirectory } from './durable-json-file.js';
import { Journal, JournalCorruptError, type JournalEntry } from './journal.js';
import { EMPTY_SNAPSHOT, JsonState, type Snapshot } from './json-state.js';
import { JsonStore, type Persistence } from './json-store.js';
import { snapshotText } from './snapshot-text.js';

export const STORE_FILE = 'agent-context.json';
export const JOURNAL_FILE = 'agent-context.journal';
/** The journal set aside while it is folded into a new snapshot; gone once the snapshot is durable. */
export const FOLDING_JOURNAL_FILE = 'agent-context.journal.folding';
/** The key of the local agent of `agent-context mcp` (see src/local-agent.ts). */
export const LOCAL_AGENT_FILE = 'local-agent.json';
/** Fold the journal into the snapshot once it is this large. */
export const DEFAULT_MAX_JOURNAL_BYTES = 64 * 1024 * 1024;

/** A file of the store that cannot be read as one. */
export class StoreFileError extends StoreOpenError {
  override name = 'StoreFileError';
}

function checkSnapshot(data: unknown, file: string): Snapshot {
  const snapshot = data as Partial<Snapshot> | null;
  if (
    snapshot?.format !== 'agent-context/1' ||
    !Array.isArray(snapshot.accounts) ||
    !Array.isArray(snapshot.memories) ||
    !Array.isArray(snapshot.ledger)
  ) {
    throw new StoreFileError(
      `${file} is not an agent-context store (format agent-context/1); move it aside.`,
    );
  }
  return snapshot as Snapshot;
}

export interface JsonFileStore {
  store: JsonStore;
  /** The DATA_DIR lock, released when the store closes. */
  lock: DataDirLock;
}

export interface JsonFileStoreOptions {
  maxJournalBytes?: number;
  /**
   * The directory is the service's own (the user data directory): it is made owner-only (0700) on every
   * start. A directory the operator named keeps its mode; only the store's files are made owner-only.
   */
  ownDirectory?: boolean;
  /** Tests only: awaited before a background fold writes its snapshot, to hold it at that point. */
  beforeSnapshotWrite?: () => Promise<void>;
}

/** Files the service writes in DATA_DIR, besides the temporary ones (which are created 0600). */
const STORE_FILES = [STORE_FILE, JOURNAL_FILE, FOLDING_JOURNAL_FILE, LOCK_FILE, LOCAL_AGENT_FILE];

/** Makes the data directory (0700 when created) and every store file in it owner-only. */
async function secureDataDir(dataDir: string, ownDirectory: boolean): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (ownDirectory) await chmod(dataDir, 0o700);
  for (const name of STORE_FILES) {
    const file = path.join(dataDir, name);
    const info = await stat(file).catch(() => undefined);
    if (info?.isFile() && (info.mode & 0o077) !== 0) await chmod(file, info.mode & 0o700);
  }
}

export async function openJsonFileStore(
  dataDir: string,
  holder: LockHolder,
  options: JsonFileStoreOptions = {},
): Promise<JsonFileStore> {
  let lock: DataDirLock;
  try {
    await secureDataDir(dataDir, options.ownDirectory ?? false);
    lock = await acquireDataDirLock(dataDir, holder);
  } catch (err) {
    if (err instanceof StoreOpenError) throw err;
    throw dataDirAccessError(dataDir, err) ?? err;
  }
  try {
    const store = await openLocked(dataDir, lock, {
      maxJournalBytes: options.maxJournalBytes ?? DEFAULT_MAX_JOURNAL_BYTES,
      beforeSnapshotWrite: options.beforeSnapshotWrite,
    });
    return { store, lock };
  } catch (err) {
    await lock.release();
    throw dataDirAccessError(dataDir, err) ?? err;
  }
}

async function openLocked(
  dataDir: string,
  lock: DataDirLock,
  options: { maxJournalBytes: number; beforeSnapshotWrite?: () => Promise<void> },
): Promise<JsonStore> {
  const file = path.join(dataDir, STORE_FILE);
  const snapshotFile = new DurableJsonFile<Snapshot>(file);
  const db = new Low<Snapshot>(snapshotFile, EMPTY_SNAPSHOT);
  try {
    await db.read();
  } catch (err) {
    throw (
      dataDirAccessError(dataDir, err) ??
      new StoreFileError(
        `${file} could not be read as JSON (${(err as Error).message}). Move it aside (the journal beside ` +
          'it is replayed onto an empty store), or restore it from a backup.',
      )
    );
  }
  const snapshot = checkSnapshot(db.data, file);
  const state = JsonState.fromSnapshot(snapshot);
  let seq = snapshot.lastSeq ?? 0;
  const replay = (entries: readonly JournalEntry[]) => {
    for (const entry of entries) {
      if (entry.seq <= seq) continue; // already in the snapshot (a crash between snapshot and truncation)
      for (const change of entry.changes) state.apply(change);
      seq = entry.seq;
    }
  };

  const journalPath = path.join(dataDir, JOURNAL_FILE);
  const foldingPath = path.join(dataDir, FOLDING_JOURNAL_FILE);
  // A journal being folded when the process stopped: its entries come before the current journal's.
  const unfolded = await stat(foldingPath).then(
    () => true,
    () => false,
  );
  if (unfolded) replay((await openJournal(foldingPath, { readOnly: true })).entries);
  const opened = await openJournal(journalPath);
  let journal = opened.journal;
  replay(opened.entries);
  let unfoldedLeft = unfolded;

  const writeSnapshot = (current: Snapshot) => snapshotFile.writeText(snapshotText(current));
  /** Folds everything into a snapshot now, with no commit running meanwhile: at start-up and shutdown. */
  const compactNow = async (current: JsonState, upTo: number) => {
    await journal.drain();
    await writeSnapshot({ ...current.toSnapshot(), lastSeq: upTo });
    await journal.truncate();
    if (unfoldedLeft) {
      await rm(foldingPath, { force: true });
      await syncDirectory(dataDir);
      unfoldedLeft = false;
    }
  };
  if (unfolded) await compactNow(state, seq);

  /**
   * Cuts the log (called between transactions): the journal so far is set aside to be folded, a new one
   * takes the next commits, and the snapshot of this moment is written while they go on. The snapshot's
   * records are the state's own immutable objects, so commits after the cut cannot change what it holds.
   * A crash before the new snapshot is in place replays the set-aside journal, then the new one.
   */
  let folding: Promise<void> | undefined;
  const compact = async (current: JsonState, upTo: number) => {
    await journal.drain();
    const snapshotNow: Snapshot = { ...current.toSnapshot(), lastSeq: upTo };
    await journal.close();
    await rename(journalPath, foldingPath);
    await syncDirectory(dataDir);
    ({ journal } = await openJournal(journalPath));
    folding = (async () => {
      await options.beforeSnapshotWrite?.();
      await writeSnapshot(snapshotNow);
      await rm(foldingPath);
      await syncDirectory(dataDir);
    })();
    return { folded: folding };
  };
  const persistence: Persistence = {
    append: (n, changes) => journal.append(n, changes),
    logBytes: () => journal.size,
    waitFor: (n) => journal.waitFor(n),
    compactionDue: () => journal.size > options.maxJournalBytes,
    compact,
    close: async (current, upTo, compactFirst) => {
      try {
        // A fold under way finishes first; if it failed, the set-aside journal is still there to replay.
        const folded = await folding?.then(
          () => true,
          () => false,
        );
        if (compactFirst && folded !== false && journal.size > 0) await compactNow(current, upTo);
      } finally {
        await journal.close();
        await lock.release();
      }
    },
  };
  return new JsonStore(state, persistence, seq);
}

/** Opens a journal file, a damaged one reported as a store file error. */
async function openJournal(
  file: string,
  options: { readOnly?: boolean } = {},
): Promise<{ journal: Journal; entries: JournalEntry[] }> {
  try {
    const opened = await Journal.open(file);
    if (options.readOnly) await opened.journal.close();
    return opened;
  } catch (err) {
    if (err instanceof JournalCorruptError) throw new StoreFileError(err.message);
    throw err;
  }
}
