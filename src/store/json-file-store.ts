/**
 * The JSON file store: one lowdb snapshot file in DATA_DIR, read at start into memory, rewritten
 * durably after each transaction, and guarded by a lock so that only one process writes it.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Low } from 'lowdb';
import type { StorePort } from '../core/store-port.js';
import { acquireDataDirLock, type DataDirLock, type LockHolder } from './data-dir-lock.js';
import { DurableJsonFile } from './durable-json-file.js';
import { StateStore } from './state-store.js';
import { EMPTY_SNAPSHOT, type Snapshot, StoreState } from './store-state.js';

export const STORE_FILE = 'agent-context.json';

export class StoreFileError extends Error {}

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
  store: StorePort;
  /** The DATA_DIR lock, released when the store closes. */
  lock: DataDirLock;
}

export async function openJsonFileStore(dataDir: string, holder: LockHolder): Promise<JsonFileStore> {
  await mkdir(dataDir, { recursive: true });
  const lock = await acquireDataDirLock(dataDir, holder);
  const file = path.join(dataDir, STORE_FILE);
  const db = new Low<Snapshot>(new DurableJsonFile<Snapshot>(file), EMPTY_SNAPSHOT);
  const load = async () => {
    try {
      await db.read();
    } catch (err) {
      throw new StoreFileError(`${file} could not be read as JSON (${(err as Error).message}).`);
    }
    return StoreState.fromSnapshot(checkSnapshot(db.data, file));
  };
  try {
    const state = await load();
    const store = new StateStore(state, {
      persist: async (current, changes) => {
        db.data = current.toSnapshot(changes);
        await db.write();
      },
      close: () => lock.release(),
    });
    return { store, lock };
  } catch (err) {
    await lock.release();
    throw err;
  }
}
