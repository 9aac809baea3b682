/**
 * The one way the service opens its store: PostgreSQL when DATABASE_URL is set (many instances on one
 * database; its migrations applied first, by whichever instance gets there first), else the JSON file store
 * in DATA_DIR (one process, which holds the DATA_DIR lock). Failures a person can fix (the directory cannot
 * be made or written, another process holds it, a file is damaged, the database is unreachable or newer than
 * this version) are StoreOpenErrors whose message says what to do.
 */
import type { Config } from '../config.js';
import type { VectorStore } from '../core/semantic-index.js';
import type { StorePort } from '../core/store-port.js';
import type { DataDirLock, LockHolder } from './json/data-dir-lock.js';
import { ExpiryPurger } from './json/expiry-purger.js';
import { openJsonFileStore } from './json/json-file-store.js';
import { type JsonOAuthRecords, openJsonOAuthRecords } from './json/json-oauth-records.js';
import type { OAuthRecords } from './oauth-records.js';
import { PostgresVectorStore } from './postgres/memory-vectors.js';
import { openPostgresStore } from './postgres/open-postgres-store.js';
import type { PostgresLiveCache } from './postgres/postgres-live-cache.js';
import { SWEEP_INTERVAL_MS, type SweeperOptions } from './postgres/postgres-sweeper.js';
import type { WindowCounters } from './window-counters.js';

export interface OpenedStore {
  store: StorePort;
  /** The DATA_DIR lock of the JSON file store; none on PostgreSQL, where every instance writes. */
  lock?: DataDirLock;
  /** Where the store is, for the log: a directory, or the database without its password. */
  where: string;
  /** The rate limits' counters shared by every instance: PostgreSQL only (one process counts in memory). */
  counters?: WindowCounters;
  /**
   * The live-data cache and single-flight leases shared by every instance: PostgreSQL only (one process
   * caches in node-cache). Its `sweepTasks` are for the background sweeper.
   */
  liveCache?: PostgresLiveCache;
  /**
   * The OAuth authorization server's records: on PostgreSQL a table every instance shares; on the JSON file
   * store `oauth.json` in DATA_DIR, whose writes under way the store's close waits for (the DATA_DIR lock is
   * released only after them).
   */
  oauthRecords: OAuthRecords;
  /**
   * Background clean-up: on PostgreSQL, of the shared tables (expired memories, idempotency records, cache
   * rows, leases, counters), one instance at a time; on the JSON file store, of expired memories. Not
   * started: the service starts it and stops it before close.
   */
  background: { start(): void; stop(): Promise<void> };
  /** Semantic search's vectors kept with their memories: PostgreSQL only (the JSON file store's are per process). */
  vectors?: VectorStore;
}

export interface OpenStoreOptions {
  /** The service's clock, by which background clean-up judges what has expired, and OAuth records expire. */
  now?: () => Date;
  /** Told the outcome of each background clean-up round (for the log). */
  onSweep?: SweeperOptions['onRound'];
}

export async function openStore(
  config: Readonly<Config>,
  holder: LockHolder,
  options: OpenStoreOptions = {},
): Promise<OpenedStore> {
  if (config.database) {
    const { store, where, counters, liveCache, oauthRecords, sweeper } = await openPostgresStore(
      config.database,
      {
        cacheMinutesMax: config.limits.cacheMinutesMax,
        historyRetentionSeconds: config.limits.memoryHistoryRetentionSeconds,
        ...options,
      },
    );
    const vectors = new PostgresVectorStore(store.queryable);
    return { store, where, counters, liveCache, oauthRecords, background: sweeper, vectors };
  }
  const { store, lock } = await openJsonFileStore(config.dataDir, holder, {
    ownDirectory: config.dataDirFrom === 'default',
  });
  // Opened under the DATA_DIR lock, which the store holds from here on.
  const now = options.now;
  let oauthRecords: JsonOAuthRecords;
  try {
    oauthRecords = await openJsonOAuthRecords(config.dataDir, now ? { now: () => now().getTime() } : {});
  } catch (err) {
    await store.close();
    throw err;
  }
  // The store's close releases the DATA_DIR lock: the OAuth records' writes under way finish first.
  const closeStore = store.close.bind(store);
  store.close = async () => {
    await oauthRecords.close();
    await closeStore();
  };
  const background = new ExpiryPurger(store, {
    intervalMs: SWEEP_INTERVAL_MS,
    historyRetentionSeconds: config.limits.memoryHistoryRetentionSeconds,
    ...(options.now ? { now: options.now } : {}),
    ...(options.onSweep ? { onRound: options.onSweep } : {}),
  });
  return {
    store,
    lock,
    oauthRecords,
    background,
    where: `${config.dataDir}${config.dataDirFrom === 'default' ? ' (the user data directory)' : ''}`,
  };
}
