/**
 * Size and range limits. Defaults are the documented ones; the operator may change any of them through
 * configuration, and the schemas (and so the OpenAPI document and MCP tool schemas) follow.
 */
import type { MemoryType } from './model.js';

export interface Limits {
  memoryKeyMaxChars: number;
  memoryValueMaxBytes: number;
  metadataMaxBytes: number;
  metadataMaxDepth: number;
  memoriesPerAgent: number;
  queryMaxChars: number;
  cacheMinutesMax: number;
  cacheMinutesDefault: number;
  searchLimitMax: number;
  searchLimitDefault: number;
  nameMaxChars: number;
  topUpMaxCents: number;
  transactionsLimitMax: number;
  transactionsLimitDefault: number;
  /** How many recent ledger entries account_info shows when no limit is given. */
  accountInfoLimitDefault: number;
  /** Most cents one pay-as-you-go agent may spend per UTC day; absent: no daily limit. */
  dailySpendCents?: number;
  /** The same for an agent on the unlimited plan; absent: none (the pay-as-you-go limit does not apply). */
  unlimitedDailySpendCents?: number;
  /**
   * Seconds a memory of each type lives when its store sets neither ttl_seconds nor expires_at
   * (AC_MEMORY_TTL); a type not listed never expires by default.
   */
  memoryTtlSeconds?: Readonly<Partial<Record<MemoryType, number>>>;
  /** Versions kept per memory key, delete markers included (AC_MEMORY_HISTORY); 0 keeps no history. */
  memoryHistoryVersions: number;
  /**
   * Seconds the history of a key without a live memory (deleted or expired) is kept after its last write
   * (AC_MEMORY_HISTORY_RETENTION): until then a delete can be undone.
   */
  memoryHistoryRetentionSeconds: number;
  historyLimitMax: number;
  historyLimitDefault: number;
  /** The largest NDJSON body memory_import takes, in bytes (AC_IMPORT_MAX_BYTES). */
  importMaxBytes: number;
  /** Semantic search counts a memory as found when its similarity to the query is at least this. */
  semanticMinSimilarity: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  memoryKeyMaxChars: 256,
  memoryValueMaxBytes: 64 * 1024,
  metadataMaxBytes: 8 * 1024,
  metadataMaxDepth: 32,
  memoriesPerAgent: 10_000,
  queryMaxChars: 500,
  cacheMinutesMax: 1440,
  cacheMinutesDefault: 15,
  searchLimitMax: 100,
  searchLimitDefault: 50,
  nameMaxChars: 100,
  topUpMaxCents: 10_000_000,
  transactionsLimitMax: 100,
  transactionsLimitDefault: 20,
  accountInfoLimitDefault: 10,
  memoryHistoryVersions: 10,
  memoryHistoryRetentionSeconds: 30 * 24 * 3600,
  historyLimitMax: 100,
  historyLimitDefault: 10,
  importMaxBytes: 32 * 1024 * 1024,
  semanticMinSimilarity: 0.5,
});
