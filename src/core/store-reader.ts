/**
 * The reads of the store port (store-port.ts): what the core reads of committed state, or of a transaction's
 * own (StoreTx extends it), and the queries of memories they answer.
 */
import type { Account, IdempotencyRecord, LedgerEntry, Memory, MemoryType, MemoryVersion } from './model.js';

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
   * would be many (a database's round trips).
   */
  getMemories(agentId: string, keys: readonly string[]): Promise<Memory[]>;
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
