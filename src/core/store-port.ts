/**
 * The persistence port. The core sees only this; the JSON file store (store/json/) and PostgreSQL
 * (store/postgres/) implement it. Methods are asynchronous so that a database adapter fits the same shape.
 */
import type { ChargePort } from './charge-port.js';
import type { Account, CacheState, IdempotencyRecord, LedgerEntry, Memory, MemoryVersion } from './model.js';
import type { StoreReader } from './store-reader.js';

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
  /** The charged operations (charge-port.ts): each checks, changes, charges and keeps its answer at once. */
  readonly charges: ChargePort;
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
