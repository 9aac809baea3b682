/**
 * Opens the PostgreSQL store: connects, brings the schema up to date (migrate.ts, under its advisory lock,
 * so that instances starting together apply each migration once), and hands back the store. A database
 * that cannot be reached, or whose schema is newer than this version knows, stops the start with a
 * StoreOpenError that says what to do.
 */
import pg from 'pg';
import type { DatabaseConfig } from '../../config.js';
import { DEFAULT_LIMITS } from '../../core/limits.js';
import { StoreOpenError } from '../store-open-error.js';
import { MigrationError, migrate } from './migrate.js';
import { PostgresLiveCache } from './postgres-live-cache.js';
import { PostgresOAuthRecords } from './postgres-oauth-records.js';
import { PostgresStore } from './postgres-store.js';
import {
  historySweep,
  IDEMPOTENCY_SWEEP,
  MEMORY_EXPIRY_SWEEP,
  PostgresSweeper,
  SWEEP_INTERVAL_MS,
  type SweeperOptions,
  USAGE_SWEEP,
} from './postgres-sweeper.js';
import { PostgresWindowCounters } from './postgres-window-counters.js';
import { backfillSearch } from './search-backfill.js';

export async function openPostgresStore(
  database: Readonly<DatabaseConfig>,
  options: {
    cacheMinutesMax?: number;
    /** How long the history of a deleted or expired memory is kept (AC_MEMORY_HISTORY_RETENTION). */
    historyRetentionSeconds?: number;
    /** The service's clock, by which the sweep judges what has expired, and OAuth records expire. */
    now?: () => Date;
    onSweep?: SweeperOptions['onRound'];
  } = {},
): Promise<{
  store: PostgresStore;
  where: string;
  counters: PostgresWindowCounters;
  liveCache: PostgresLiveCache;
  /** The authorization server's records, shared by every instance. */
  oauthRecords: PostgresOAuthRecords;
  /** The background sweep of every shared table, not started: the caller starts and stops it. */
  sweeper: PostgresSweeper;
}> {
  const where = database.label;
  const client = new pg.Client({ connectionString: database.url });
  // A connection lost mid-migration fails the query under way; its 'error' event must not end the process.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await migrate(client);
    await backfillSearch(client);
  } catch (err) {
    if (err instanceof MigrationError) throw new StoreOpenError(`${where}: ${err.message}`);
    throw new StoreOpenError(
      `The database at ${where} could not be reached or set up (${(err as Error).message}). Check ` +
        'DATABASE_URL and that the server is running and accepts this user.',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
  const store = new PostgresStore({
    connectionString: database.url,
    poolMax: database.poolMax,
    statementTimeoutMs: database.statementTimeoutMs,
  });
  // The rate limits' counters, the live-data cache and single-flight leases, and the authorization server's
  // records, shared by every instance, over the store's pool (the store ends it on close).
  const counters = new PostgresWindowCounters(store.queryable);
  const liveCache = new PostgresLiveCache(store.queryable, {
    maxAgeMinutes: options.cacheMinutesMax ?? DEFAULT_LIMITS.cacheMinutesMax,
  });
  const now = options.now;
  const oauthRecords = new PostgresOAuthRecords(store.queryable, now ? { now: () => now().getTime() } : {});
  const sweeper = new PostgresSweeper(store.connections, {
    tasks: [
      IDEMPOTENCY_SWEEP,
      MEMORY_EXPIRY_SWEEP,
      USAGE_SWEEP,
      historySweep(options.historyRetentionSeconds ?? DEFAULT_LIMITS.memoryHistoryRetentionSeconds),
      ...counters.sweepTasks,
      ...liveCache.sweepTasks,
      ...oauthRecords.sweepTasks,
    ],
    intervalMs: SWEEP_INTERVAL_MS,
    ...(options.now ? { now: options.now } : {}),
    ...(options.onSweep ? { onRound: options.onSweep } : {}),
  });
  return { store, where, counters, liveCache, oauthRecords, sweeper };
}
