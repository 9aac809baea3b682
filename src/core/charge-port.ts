/**
 * The optional part of the store port through which a database runs each charged operation as one statement
 * (issue 32): the account's check and debit, the operation's reads and writes, the ledger entry and the
 * idempotency record, committed together without a transaction held open across round trips. A store that
 * offers it (PostgreSQL) applies the same rules as the core's `runCharged` path (ledger.ts, memory-writes.ts);
 * the core turns each refusal into the error that path throws, so that both stores answer alike. The JSON
 * store does not offer it: its transactions cost no round trips.
 */
import type { JsonObject, LedgerEntry, LedgerOperation, Memory, MemoryType, MemoryVersion } from './model.js';

/** The idempotency claim a request holds (idempotency.ts), finished by the statement with its answer. */
export interface ChargeClaim {
  key: string;
  token: string;
  fingerprint: string;
}

/** Who pays for a charged operation, how much, and what its ledger entry says. */
export interface ChargeRequest {
  agentId: string;
  /** Now (ISO): the entry's time, the instant at which memories are live, the time of anything written. */
  at: string;
  cents: number;
  operation: LedgerOperation;
  /** The ledger entry's id. */
  entryId: string;
  ref: Pick<LedgerEntry, 'memoryKey' | 'queryType' | 'query'>;
  /** The OAuth client spending, named in the entry. */
  client?: string;
  /** The daily spending limit of each plan (absent: none), counted from `since` (the UTC day's start, ISO). */
  daily: { payAsYouGo?: number; unlimited?: number; since: string };
  claim?: ChargeClaim;
}

/** Why a charged operation did nothing (the core's error for each: ledger.ts `refusalError`). */
export type ChargeRefusal =
  | { refused: 'unauthorized' }
  | { refused: 'insufficient_credits'; balanceCents: number }
  | { refused: 'daily_limit_reached'; spentCents: number; limitCents: number }
  | { refused: 'not_found' }
  | { refused: 'version_conflict'; key: string; currentVersion: number | null }
  | { refused: 'quota_exceeded' }
  | { refused: 'import_quota_exceeded'; held: number; created: number }
  | { refused: 'version_not_found' }
  | { refused: 'version_deleted' }
  /** What the operation planned on (read before the statement) changed since: plan again. */
  | { refused: 'stale' };

/** What a charged operation did, with the balance after its charge; or why it did nothing. */
export type Charged<T> = (T & { refused?: undefined; balanceCents: number }) | ChargeRefusal;

/** How memories are written, whatever writes them (the core's Limits). */
export interface WriteRules {
  /** The most live memories an agent may hold. */
  quota: number;
  /** History versions kept per key (0: none). */
  keep: number;
  /** How long the history of a key without a live memory is kept. */
  retentionSeconds: number;
}

/** A memory to write: its content, as the core set it (expiry included). */
export interface MemoryContent {
  key: string;
  value: string;
  type: MemoryType;
  metadata: JsonObject;
  expiresAt?: string;
  ttlSeconds?: number;
}

/** One memory of a memory_store or memory_store_batch, with its write condition. */
export interface StoreItem extends MemoryContent {
  expectedVersion?: number;
  createOnly?: boolean;
}

/** One line of an import as the core planned it: against this live version (null: none). */
export interface ImportItem extends MemoryContent {
  plannedVersion: number | null;
  kept: { createdAt?: string; updatedAt?: string; version?: number };
}

export interface ChargeStatements {
  /** memory_retrieve: the live memory (its expiry moved by its time to live when `refresh`). */
  retrieveMemory(charge: ChargeRequest, key: string, refresh: boolean): Promise<Charged<{ memory: Memory }>>;
  /**
   * memory_store and memory_store_batch: each item in order, each seeing those before it, all or none; each
   * memory as written and whether it created its key.
   */
  storeMemories(
    charge: ChargeRequest,
    items: readonly StoreItem[],
    rules: WriteRules,
  ): Promise<Charged<{ results: { memory: Memory; created: boolean }[] }>>;
  /** memory_history: the live memory's version (null: none) and the newest `limit` history entries. */
  memoryHistory(
    charge: ChargeRequest,
    key: string,
    limit: number,
    rules: WriteRules,
  ): Promise<Charged<{ currentVersion: number | null; versions: MemoryVersion[] }>>;
  /**
   * memory_restore: `version` of the key's history written again, if the live memory is at `expectedVersion`;
   * refused as `stale` when that version kept changing while the store read it.
   */
  restoreMemory(
    charge: ChargeRequest,
    restore: { key: string; version: number; expectedVersion?: number },
    rules: WriteRules,
  ): Promise<Charged<{ memory: Memory; created: boolean }>>;
  /** memory_import: the planned lines written; `answer` is the import's answer, whose balance the store sets. */
  importMemories(
    charge: ChargeRequest,
    items: readonly ImportItem[],
    rules: WriteRules,
    answer: JsonObject,
  ): Promise<Charged<{ written: Memory[] }>>;
  /**
   * A charge whose answer the core built already (search, live data): `answer` (used when the request holds an
   * idempotency claim) is what a replay gets, its `credit_balance_cents` set by the store.
   */
  charge(charge: ChargeRequest, answer: JsonObject): Promise<Charged<object>>;
}
