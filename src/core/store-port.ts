/**
 * The persistence port. The core sees only this; adapters (JSON file now, PostgreSQL later) implement it.
 * Methods are asynchronous so that a database adapter fits the same shape.
 */
import type { ChargeStatements } from './charge-port.js';
import type {
  Account,
  CacheState,
  IdempotencyRecord,
  LedgerEntry,
  Memory,
  MemoryType,
  MemoryVersion,
} from './model.js';

export interface MemoryFilter {
  type?: MemoryType;
  limit: number;
  /** Only memories live at this instant (ISO); absent: every memory, expired ones too. */
  liveAt?: string;
}

/** A value a metadata filter compares a top-level field with. */
export type MetadataScalar = string | number | boolean | null;

/**
 * Which of an agent's memories a query reads, and in what order: all conditions hold together. Without
 * `text`, most recently updated first, continued `after` a hit's position; with `text`, ranked (the key that
 * is the query first, then keys holding it, then by the store's text rank), continued at `offset`.
 */
export interface MemoryQuery {
  /** Only memories live at this instant (ISO). */
  liveAt: string;
  /** Only memories of these types. */
  types?: readonly MemoryType[];
  /** Only memories whose metadata has each of these top-level fields, equal to the value. */
  metadata?: Readonly<Record<string, MetadataScalar>>;
  /** Only memories updated strictly after / before these instants (ISO). */
  updatedAfter?: string;
  updatedBefore?: string;
  /** Only memories whose key starts with this. */
  keyPrefix?: string;
  /** Ranked search: memories whose key, value or metadata values hold a term of it, or whose key holds it. */
  text?: string;
  limit: number;
  /** Unranked: the position of the previous page's last hit. */
  after?: string;
  /** Ranked: how many hits the previous pages held. */
  offset?: number;
}

export interface MemoryHit {
  memory: Memory;
  /** Ranked only: the store's text rank (higher is better; comparable within one answer only). */
  score?: number;
  /** Where the hit stands in the unranked order, for `after` (opaque, the store's own). */
  position: string;
}

export interface MemoryPage {
  hits: MemoryHit[];
  /** How many memories match the query's conditions, on every page. */
  total: number;
}

/** How many live-data answers an agent got on one UTC day, served one way. */
export interface LiveUsageCount {
  agentId: string;
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  state: CacheState;
  count: number;
}

/** An agent's charges of one operation on one UTC day. */
export interface LedgerUsage {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  operation: string;
  /** How many ledger entries charged for it. */
  charges: number;
  /** What they cost (`costOf`): charges the unlimited plan covered count too. */
  spentCents: number;
}

/** One page of an agent's ledger, newest first. */
export interface LedgerPage {
  entries: LedgerEntry[];
  /** Where the next page starts (pass it as `before`), when more entries follow. */
  next?: number;
}

/** One page of accounts in e-mail order, with how many match in all. */
export interface AccountPage {
  accounts: Account[];
  total: number;
}

/**
 * Reads for people looking at an account or at the service (the usage endpoint, the console, the
 * operator): of committed state, outside transactions, never on a hot path.
 */
export interface StoreReports {
  /**
   * The agent's ledger entries, newest first, at most `limit`, those older than the position `before` (a
   * page's `next`) when given.
   */
  ledgerPage(agentId: string, page: { limit: number; before?: number }): Promise<LedgerPage>;
  /** The agent's charges (not credits nor plan changes) at or after `since` (ISO), per UTC day and operation. */
  ledgerUsage(agentId: string, since: string): Promise<LedgerUsage[]>;
  /** The agent's live-data answer counts from the UTC day `sinceDay` (YYYY-MM-DD) on. */
  liveUsage(agentId: string, sinceDay: string): Promise<LiveUsageCount[]>;
  /** Every agent's live-data answer counts from the UTC day `sinceDay` on, summed per day and state. */
  liveUsageTotals(sinceDay: string): Promise<Omit<LiveUsageCount, 'agentId'>[]>;
  /**
   * Accounts in e-mail order (of code units; e-mails are lower-cased ASCII), those after the e-mail `after`,
   * whose e-mail contains `emailContains` when given, at most `limit`; `total` counts every match.
   */
  listAccounts(page: { limit: number; after?: string; emailContains?: string }): Promise<AccountPage>;
}

/** Reads of committed state. */
export interface StoreReader {
  getAccount(id: string): Promise<Account | undefined>;
  findAccountByKeyHash(keyHash: string): Promise<Account | undefined>;
  findAccountByEmail(email: string): Promise<Account | undefined>;
  /** Newest first, at most `limit`. */
  listLedger(agentId: string, limit: number): Promise<LedgerEntry[]>;
  /** The memory under `key`, expired or not (the core judges expiry by its clock). */
  getMemory(agentId: string, key: string): Promise<Memory | undefined>;
  /**
   * The memories under `keys` that exist, expired or not, in any order: one read where `getMemory` per key
   * would be many (a database). Optional: without it, callers read key by key.
   */
  getMemories?(agentId: string, keys: readonly string[]): Promise<Memory[]>;
  /**
   * Most recently updated first, at most `limit`, optionally of one type, only those live at `liveAt` (an ISO
   * instant: no expiry, or one after it). Never reads other agents' data.
   */
  listMemories(agentId: string, filter: MemoryFilter): Promise<Memory[]>;
  /**
   * One page of the agent's memories matching `query`, with their total. Never reads other agents' data. A
   * position it cannot read is an `invalid_input` AppError on field `cursor`.
   */
  queryMemories(agentId: string, query: MemoryQuery): Promise<MemoryPage>;
  /**
   * The agent's memories live at `liveAt`, in key order (the store's own: UTF-16 code units on the JSON
   * store, bytes of UTF-8 on PostgreSQL, the same for every key without characters past U+FFFF), those after
   * the key `after` (when given), at most `limit`: pages that an update does not reorder (for export).
   */
  listMemoriesByKey(
    agentId: string,
    page: { after?: string; limit: number; liveAt: string },
  ): Promise<Memory[]>;
  /** The agent's memories live at `liveAt` (an ISO instant; absent: all of them, expired ones too). */
  countMemories(agentId: string, liveAt?: string): Promise<number>;
  /** The key's history, newest first, at most `limit` entries (delete markers included). */
  listMemoryVersions(agentId: string, key: string, limit: number): Promise<MemoryVersion[]>;
  /**
   * Cents the agent's operations cost by entries at or after `since` (an ISO timestamp): the sum of
   * `costOf` over them, so charges covered by the unlimited plan count too.
   */
  spentSince(agentId: string, since: string): Promise<number>;
  getIdempotency(agentId: string, key: string): Promise<IdempotencyRecord | undefined>;
}

/** A transaction: reads see the transaction's own writes; writes land all together or not at all. */
export interface StoreTx extends StoreReader {
  /** Insert or replace an account (by id). */
  putAccount(account: Account): Promise<void>;
  appendLedger(entry: LedgerEntry): Promise<void>;
  /** Insert or replace a memory (by agentId and key). */
  putMemory(memory: Memory): Promise<void>;
  /** @returns false when there was no such memory. */
  deleteMemory(agentId: string, key: string): Promise<boolean>;
  /**
   * Moves the expiry of an existing memory (`refresh_on_read`), changing nothing else: not its version, not
   * its place in the update order.
   * @returns false when there was no such memory (a background purge may have removed it since it was read).
   */
  setMemoryExpiry(agentId: string, key: string, expiresAt: string): Promise<boolean>;
  /**
   * Adds a version (or delete marker) to its key's history, newer than every version there, and drops the
   * oldest so that at most `keep` remain.
   */
  putMemoryVersion(entry: MemoryVersion, keep: number): Promise<void>;
  /** Drops a key's whole history (a new life of the key after its retention ran out). */
  dropMemoryVersions(agentId: string, key: string): Promise<void>;
  /**
   * Insert or replace the record of (agentId, key). With `claimToken`, this finishes that claim (see
   * `StorePort.claimIdempotency`): a store whose claims can expire fails the transaction if the claim is no
   * longer this request's, so that a key never charges twice.
   */
  putIdempotency(record: IdempotencyRecord, claimToken?: string): Promise<void>;
  /** Adds live-data answer counts to the agent's (and day's, and state's) running counts. */
  addLiveUsage(counts: readonly LiveUsageCount[]): Promise<void>;
}

/** What a claim on an idempotency key found. */
export type IdempotencyClaim =
  /** The key is this request's until it stores its record or releases the claim. */
  | { state: 'claimed'; token: string }
  /** A request under this key finished: its record (the caller compares fingerprints). */
  | { state: 'stored'; record: IdempotencyRecord }
  /** Another request holds the key and has not finished. */
  | { state: 'running'; fingerprint: string };

export interface IdempotencyClaimRequest {
  agentId: string;
  key: string;
  fingerprint: string;
  operation: string;
  /** Now, as an ISO timestamp. */
  now: string;
  /** Records created at or before this instant (ISO) count as gone: the key may be used again. */
  storedAfter: string;
  /**
   * How long a claim holds if its request never finishes nor releases it (its process died). A store used by
   * one process only may keep claims for as long as the process lives instead.
   */
  leaseMs: number;
}

export type StoreHealth = 'ok' | 'failed' | 'unreachable' | 'closed';

/** Figures of the store for the operator's metrics: the JSON store's journal, or a database's pool. */
export interface StoreStats {
  /** Bytes of journal written since the last snapshot (JSON file store). */
  journalBytes?: number;
  /** Connections of this instance's pool (PostgreSQL): all, idle, and requests waiting for one. */
  pool?: { total: number; idle: number; waiting: number };
}

export interface StorePort extends StoreReports {
  /**
   * Charged operations as one statement each, where the store can (a database: charge-port.ts); absent, the
   * core runs them as transactions (`transact`).
   */
  readonly charges?: ChargeStatements;
  /**
   * Runs `work` as one atomic, isolated step: no other transaction interleaves with it, and its writes are
   * durable before the returned promise resolves. If `work` throws, nothing it wrote is kept.
   */
  transact<T>(work: (tx: StoreTx) => Promise<T>): Promise<T>;
  /** Reads committed state, without waiting for transactions in flight. */
  read<T>(work: (reader: StoreReader) => Promise<T>): Promise<T>;
  /**
   * Claims an agent's idempotency key for one request, or says why not: one request at a time runs under a
   * key, across every process that shares the store.
   */
  claimIdempotency(request: IdempotencyClaimRequest): Promise<IdempotencyClaim>;
  /** Ends a claim that stored no record (its request failed), so that a retry runs again; else a no-op. */
  releaseIdempotency(agentId: string, key: string, token: string): Promise<void>;
  /** Flushes and releases the store. Further calls fail. */
  close(): Promise<void>;
  /**
   * Whether the store takes work now: `ok`; `failed` after a write failed (it refuses all work until a
   * restart); `unreachable` while a database cannot be reached (work resumes by itself when it can);
   * `closed` after close(). Never throws; a database store asks the database, with a short timeout.
   */
  health(): Promise<StoreHealth>;
  /** Its figures now, for metrics; synchronous and cheap. */
  stats(): StoreStats;
}
