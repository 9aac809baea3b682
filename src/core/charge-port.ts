/**
 * The charge port: the one way the core runs a charged operation (retrieve, store and batch, history,
 * restore, import, and the charge of an answer built before it: a search page, live data) on a store. The
 * core says, in its own terms, who pays, how much and under which ledger entry (`ChargeRequest`), what to
 * check and change (the operation's arguments and the `WriteRules`), and the answer is built from what the
 * store reports (memory-answers.ts); the store does all of it at once (the account's check and debit, the
 * operation's reads and writes, the ledger entry and the idempotency record), or nothing, and answers with
 * the result and the balance after the charge, or with why it did nothing (`ChargeRefusal`), which the core
 * turns into its error (memory-charges.ts, ledger.ts `refusalError`).
 *
 * Every store implements it. The JSON store runs the core's rule functions inside its transaction
 * (store/transaction-charges.ts); PostgreSQL runs one statement per operation (a PL/pgSQL function that
 * repeats those rules, pinned to them by the store contract suite, test/store/contract) and falls back to the
 * same transaction code where a statement does not fit (store/postgres/postgres-charges.ts).
 */
import type { AppError } from './errors.js';
import type { JsonObject, LedgerEntry, LedgerOperation, Memory, MemoryType, MemoryVersion } from './model.js';
import type { StoreReader } from './store-reader.js';

/**
 * The idempotency claim a request holds (idempotency.ts), finished by the charge with its answer; the record
 * names the charge's operation (the core claims a key under the name it charges: operation-kit.ts).
 */
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
  /** The request's idempotency claim: the charge finishes it, keeping the answer for replays. */
  claim?: ChargeClaim;
}

/** Why a charged operation did nothing (the core's error for each: memory-charges.ts, ledger.ts). */
export type ChargeRefusal =
  | { refused: 'unauthorized' }
  | { refused: 'insufficient_credits'; balanceCents: number }
  | { refused: 'daily_limit_reached'; spentCents: number; limitCents: number }
  | { refused: 'not_found' }
  | { refused: 'version_conflict'; key: string; currentVersion: number | null }
  | { refused: 'quota_exceeded' }
  | { refused: 'import_quota_exceeded'; held: number; created: number }
  | { refused: 'version_not_found' }
  | { refused: 'version_deleted' };

/** What a charged operation did, with the balance after its charge; or why it did nothing. */
export type Charged<T> = (T & { refused?: undefined; balanceCents: number }) | ChargeRefusal;

/** How memories are written, whatever writes them (from the core's Limits: memory-writes.ts `writeRules`). */
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
  /**
   * The item's expiry was refused (`expiryOf`): the operation fails with this error when it reaches the item,
   * after the refusals of the items before it and of the item's own condition.
   */
  refusedExpiry?: AppError;
}

/** One line of an import as the core planned it: against this live version (null: none). */
export interface ImportItem extends MemoryContent {
  plannedVersion: number | null;
  kept: { createdAt?: string; updatedAt?: string; version?: number };
}

/** An import as planned on what a reader holds at an instant: what it writes, what it costs, its answer. */
export interface ImportPlan {
  items: ImportItem[];
  cents: number;
  /** The import's answer, whose `credit_balance_cents` the store sets. */
  answer: JsonObject;
}

/**
 * Plans an import on `reader` at `at`; throws the import's own errors (its quota). The store plans where it
 * writes (a transaction), or plans on a read and writes only if no planned memory changed since.
 */
export type ImportPlanner = (reader: StoreReader, at: Date) => Promise<ImportPlan>;

export interface ChargePort {
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
  /** memory_restore: `version` of the key's history written again, if the live memory is at `expectedVersion`. */
  restoreMemory(
    charge: ChargeRequest,
    restore: { key: string; version: number; expectedVersion?: number },
    rules: WriteRules,
  ): Promise<Charged<{ memory: Memory; created: boolean }>>;
  /**
   * memory_import: the plan's lines written, charged the plan's cents (`charge.cents` is ignored); the answer
   * kept for a replay is the plan's, with the balance after.
   */
  importMemories(
    charge: ChargeRequest,
    plan: ImportPlanner,
    rules: WriteRules,
  ): Promise<Charged<{ written: Memory[]; answer: JsonObject }>>;
  /**
   * A charge whose answer the core built already (search, live data): `answer` (kept when the request holds an
   * idempotency claim) is what a replay gets, its `credit_balance_cents` set by the store.
   */
  charge(charge: ChargeRequest, answer: JsonObject): Promise<Charged<object>>;
}
