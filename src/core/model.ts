/** The records the service keeps. Plain data: the store persists them, the core reasons about them. */

export const MEMORY_TYPES = ['context', 'preference', 'workflow', 'fact'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export const QUERY_TYPES = ['news', 'search', 'weather', 'price'] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

export interface Account {
  id: string;
  email: string;
  name: string | null;
  plan: string;
  /** SHA-256 of the API key, hex. The key itself is never stored. */
  keyHash: string;
  /** Always equal to the sum of this account's ledger entries. */
  balanceCents: number;
  createdAt: string;
}

export type JsonObject = { [key: string]: unknown };

export interface Memory {
  agentId: string;
  key: string;
  value: string;
  type: MemoryType;
  metadata: JsonObject;
  createdAt: string;
  updatedAt: string;
}

/**
 * The stored outcome of a request made with an idempotency key: a retry with the same key and the same
 * request gets `body` back (status included) and is not charged again.
 */
export interface IdempotencyRecord {
  agentId: string;
  key: string;
  /** SHA-256 over the operation and its validated input. */
  fingerprint: string;
  operation: string;
  status: number;
  body: JsonObject;
  createdAt: string;
}

/** How long an idempotency record is kept: at least this long, then it may be dropped. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** What a ledger entry was for. */
export type LedgerOperation =
  | 'starter_credit'
  | 'top_up'
  | 'memory_store'
  | 'memory_retrieve'
  | 'memory_delete'
  | 'memory_search'
  | 'data';

/** One append-only ledger line: a credit (positive) or a debit (negative). Never changed once written. */
export interface LedgerEntry {
  id: string;
  agentId: string;
  at: string;
  operation: LedgerOperation;
  amountCents: number;
  balanceAfterCents: number;
  memoryKey?: string;
  queryType?: QueryType;
  query?: string;
}
