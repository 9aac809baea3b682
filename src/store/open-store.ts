/**
 * The one way the service opens its store: the JSON file store in DATA_DIR (the only adapter today).
 * Failures a person can fix (the directory cannot be made or written, another process holds it, a file is
 * damaged) are StoreOpenErrors whose message says what to do.
 */
import type { Config } from '../config.js';
import type { LockHolder } from './data-dir-lock.js';
import { type JsonFileStore, openJsonFileStore } from './json-file-store.js';

export function openStore(config: Readonly<Config>, holder: LockHolder): Promise<JsonFileStore> {
  return openJsonFileStore(config.dataDir, holder, { ownDirectory: config.dataDirFrom === 'default' });
}
