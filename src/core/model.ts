/** The records the service keeps. Plain data: the store persists them, the core reasons about them. */

export const MEMORY_TYPES = ['context', 'preference', 'workflow', 'fact'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** How a live-data answer was served: fetched for it, from the cache, stale-if-error, or another request's fetch. */
export const CACHE_STATES = ['fresh', 'hit', 'stale', 'shared_flight'] as const;
export type CacheState = (typeof CACHE_STATES)[number];

/**
 * How many UTC days of live-data answer counts are kept (today included): as many as the usage endpoint
 * shows at most. Older counts are removed in the background.
 */
export const USAGE_DAYS_KEPT = 90;

/** The first UTC day (YYYY-MM-DD) whose counts are kept at `now`. */
export function firstUsageDayKept(now: Date): string {
  return new Date(Math.floor(now.getTime() / 86_400_000 - (USAGE_DAYS_KEPT - 1)) * 86_400_000)
    .toISOString()
    .slice(0, 10);
}

export const QUERY_TYPES = ['news', 'search', 'weather', 'price'] as const;
export type QueryType = (typeof QUERY_TYPES)[number];

/**
 * `pay-as-you-go`: the spec's plan, paid from the balance and refused when it runs short (the default of
 * registration). `unlimited`: never refused for credit (for a person's own agents); its charges are
 * recorded with their cost and an amount of 0.
 */
export const PLANS = ['pay-as-you-go', 'unlimited'] as const;
export type Plan = (typeof PLANS)[number];

export interface Account {
  id: string;
  email: string;
  name: string | null;
  plan: Plan;
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
  /**
   * 1 when created, one more with each change (a store over it). Conditional writes compare it (REST
   * If-Match / ETag, MCP expected_version). Memories stored before versions existed load as version 1.
   */
  version: number;
  /**
   * When it expires (ISO); absent: never. From then on it is absent everywhere (not read, listed, counted
   * or searched) until the background purge removes it.
   */
  expiresAt?: string;
  /** The time to live it was stored with, in seconds: what `refresh_on_read` extends it by. */
  ttlSeconds?: number;
}

/**
 * One entry of a memory's history: a version as it was stored (or restored), or the delete that ended it (a
 * delete marker, which takes a version number too, so that numbers never repeat while the history is kept).
 */
export interface MemoryVersion {
  agentId: string;
  key: string;
  version: number;
  /** When this version was written, or when the memory was deleted. */
  at: string;
  /** True on a delete marker, which has no content. */
  deleted?: true;
  value?: string;
  type?: MemoryType;
  metadata?: JsonObject;
  /** The time to live it was stored with, which a restore gives it again from then. */
  ttlSeconds?: number;
}

/** The longest a memory may live: ten years. */
export const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;

/**
 * Whether the memory is live at `at` (an ISO instant): it has no expiry, or expires after `at`. Without an
 * instant, every memory counts as live.
 */
export function isLive(memory: Pick<Memory, 'expiresAt'>, at: string | undefined): boolean {
  return at === undefined || memory.expiresAt === undefined || memory.expiresAt > at;
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

export function isUnlimited(account: Pick<Account, 'plan'>): boolean {
  return account.plan === 'unlimited';
}

/**
 * The operations of the table that are charged through the ledger: each is an entry built with
 * `chargedOperation` (core/operation-kit.ts), which takes only these names, and the table is checked at
 * compile time to hold an entry for each (operations.ts), so this list and the table's charged entries are
 * the same set. Their price and ledger name come from their entry, nowhere else.
 */
export const CHARGED_OPERATIONS = [
  'memory_store',
  'memory_store_batch',
  'memory_retrieve',
  'memory_delete',
  'memory_search',
  'memory_history',
  'memory_restore',
  'memory_import',
  'data',
] as const;
export type ChargedOperationName = (typeof CHARGED_OPERATIONS)[number];

/** Ledger entries that are not charges: credits and plan changes. */
export const CREDIT_KINDS = ['starter_credit', 'top_up', 'plan_change'] as const;
export type CreditKind = (typeof CREDIT_KINDS)[number];

/** What a ledger entry was for: a charged operation of the table, or a credit kind. */
export type LedgerOperation = ChargedOperationName | CreditKind;

/**
 * One append-only ledger line: a credit (positive amount), a debit (negative), or a charge covered by the
 * unlimited plan or a plan change (amount 0). Never changed once written. The balance is the sum of the
 * amounts.
 */
export interface LedgerEntry {
  id: string;
  agentId: string;
  at: string;
  operation: LedgerOperation;
  /** The change of the balance. */
  amountCents: number;
  balanceAfterCents: number;
  /**
   * What the operation cost, on a charge. Absent on entries written before plans existed, where the cost
   * is `-amountCents` (see `costOf`).
   */
  costCents?: number;
  /** The plan that covered a charge (unlimited), or the new plan of a `plan_change`. */
  plan?: Plan;
  memoryKey?: string;
  queryType?: QueryType;
  query?: string;
  /** The Idempotency-Key of the request that was charged, when it had one: an audit finds at most one per key. */
  idempotencyKey?: string;
  /**
   * The client that spent it, when the request carried an OAuth access token rather than the account's own
   * key: the client's id (a Client ID Metadata Document URL, or an id from dynamic registration).
   */
  client?: string;
}

/** What a ledger entry charged the agent for (0 for credits and plan changes). */
export function costOf(entry: Pick<LedgerEntry, 'amountCents' | 'costCents'>): number {
  return entry.costCents ?? Math.max(0, -entry.amountCents);
}
