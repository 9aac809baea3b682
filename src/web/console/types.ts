/** The shapes of the API answers the console reads (docs/api.md). */

export type Plan = 'pay-as-you-go' | 'unlimited';
export type MemoryType = 'context' | 'preference' | 'workflow' | 'fact';
export const MEMORY_TYPES: readonly MemoryType[] = ['context', 'preference', 'workflow', 'fact'];
export type QueryType = 'news' | 'search' | 'weather' | 'price';

export interface Ping {
  status: string;
  service: string;
  version: string;
  admin_api?: boolean;
}

export interface Account {
  email: string;
  name?: string | null;
  plan: Plan;
  credit_balance_cents: number;
  created_at: string;
}

export interface RotateAnswer {
  agent_key: string;
  credit_balance_cents: number;
  plan: Plan;
  rotated_at: string;
}

export interface Usage {
  since: string;
  days: { date: string; spent_cents: number; charges: number }[];
  operations: { operation: string; charges: number; spent_cents: number }[];
  today: { date: string; spent_cents: number; daily_limit_cents: number | null; resets_at: string };
  live_data: {
    answers: number;
    fresh: number;
    hit: number;
    stale: number;
    shared_flight: number;
    cache_hit_rate: number | null;
  };
  credit_balance_cents: number;
  plan: Plan;
}

export interface Transaction {
  id: string;
  at: string;
  operation: string;
  amount_cents: number;
  balance_after_cents: number;
  cost_cents?: number;
  plan?: Plan;
  memory_key?: string;
  query_type?: string;
  query?: string;
}

export interface Transactions {
  transactions: Transaction[];
  count: number;
  credit_balance_cents: number;
  next_cursor?: string | null;
}

export interface Memory {
  memory_key: string;
  memory_value: string;
  memory_type: MemoryType;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  version: number;
  expires_at: string | null;
  score?: number;
  snippet?: string | null;
}

export interface SearchAnswer {
  memories: Memory[];
  count: number;
  total: number;
  next_cursor: string | null;
  cost_cents: number;
  credit_balance_cents: number;
}

export interface StoreAnswer {
  memory: Memory;
  created: boolean;
  cost_cents: number;
  credit_balance_cents: number;
}

export interface HistoryVersion {
  version: number;
  stored_at: string;
  deleted: boolean;
  memory_value?: string;
  memory_type?: MemoryType;
  metadata?: Record<string, unknown>;
}

export interface HistoryAnswer {
  memory_key: string;
  current_version: number | null;
  versions: HistoryVersion[];
  cost_cents: number;
  credit_balance_cents: number;
}

export interface RestoreAnswer extends StoreAnswer {
  restored_from: number;
}

export interface DataAnswer {
  success: boolean;
  data: unknown;
  from_cache: boolean;
  cache_state?: 'fresh' | 'hit' | 'stale' | 'shared_flight';
  cost_cents: number;
  credit_balance_cents: number;
  fetched_at: string;
  cached_at?: string;
  source: string;
  as_of?: string | null;
  cache_age_s?: number;
  providers_asked?: string[];
  stale?: boolean;
  freshness_note?: string;
}

export interface AdminAccount {
  email: string;
  name?: string | null;
  plan: Plan;
  credit_balance_cents: number;
  created_at: string;
}

export interface AdminAccounts {
  accounts: AdminAccount[];
  total: number;
  next_cursor: string | null;
}

export interface ProviderStatus {
  id: string;
  /** The chain the provider serves in: a query type, `geocoding` or `<kind> price`. */
  chain?: string;
  query_types?: string[];
  breaker: 'closed' | 'open' | 'half-open';
  recent_failures: { at: string; message: string }[];
  tokens: { available: number; capacity: number } | null;
}

export interface AdminStatus {
  providers: ProviderStatus[];
  /** The counts are of `day` (UTC), today. */
  cache: { entries: number; day?: string; hits: number; misses: number; hit_rate: number | null };
}

/** An OAuth client (an app such as Claude or ChatGPT) the account has allowed (GET /api/ac/oauth/clients). */
export interface OAuthClient {
  client_id: string;
  client_name: string;
  /** The host its answers go to (its redirect URIs'), or of its metadata document. */
  client_host: string;
  /** `read`, `write`. */
  scopes: string[];
  allowed_at: string;
  last_used_at: string | null;
}

export interface OAuthClients {
  clients: OAuthClient[];
}
