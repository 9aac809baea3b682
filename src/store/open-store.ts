/**
 * The one way the service opens its store: PostgreSQL when DATABASE_URL is set (many instances on one
 * database; its migrations applied first, by whichever instance gets there first), else the JSON file store
 * in DATA_DIR (one process, which holds the DATA_DIR lock). Failures a person can fix (the directory cannot
 * be made or written, another process holds it, a file is damaged, the database is unreachable or newer than
 * this version) are StoreOpenErrors whose message says what to do.
 */
import type { Config } from '../config.js';
import type { StorePort } from '../core/store-port.js';
import type { DataDirLock, LockHolder } from './data-dir-lock.js';
import { openJsonFileStore } from './json-file-store.js';
import { openPostgresStore } from './postgres/open-postgres-store.js';

export interface OpenedStore {
  store: StorePort;
  /** The DATA_DIR lock of the JSON file store; none on PostgreSQL, where every instance writes. */
  lock?: DataDirLock;
  /** Where the store is, for the log: a directory, or the database without its password. */
  where: string;
}

export async function openStore(config: Readonly<Config>, holder: LockHolder): Promise<OpenedStore> {
  if (config.database) {
    const { store, where } = await openPostgresStore(config.database);
    return { store, where };
  }
  const { store, lock } = await openJsonFileStore(config.dataDir, holder, {
    ownDirectory: config.dataDirFrom === 'default',
  });
  return {
    store,
    lock,
    where: `${config.dataDir}${config.dataDirFrom === 'default' ? ' (the user data directory)' : ''}`,
  };
}
