/**
 * Ports for live data: where results come from (upstream providers, outside the core) and where they are
 * cached (node-cache, or PostgreSQL shared by many instances; outside the core). The core decides when to
 * use which and what to charge.
 */
import type { JsonObject, QueryType } from './model.js';

/** A validated, normalised upstream answer. */
export interface LiveResult {
  data: JsonObject;
  /** The upstream that answered, e.g. `open-meteo`, `coingecko`, `hn-algolia`. */
  source: string;
  /** The upstream's own timestamp of the data, ISO 8601 UTC, when it gives one. */
  asOf?: string;
  /**
   * Seconds during which fetching again cannot give newer data (e.g. daily FX rates). The cache serves
   * the result that long even to a request that asked for fresher data, and says so.
   */
  refreshFloorS?: number;
  /**
   * The providers called for this result, in order (those that failed or answered empty included), when
   * there were more than one; the last is `source` unless every one was empty.
   */
  providersAsked?: string[];
}

/**
 * Fetches fresh data for a normalised query. Throws AppError: `not_found` (no such city or asset),
 * `upstream_failed` (error status, network error, unparseable or invalid body), `upstream_timeout`.
 */
export interface LiveDataSource {
  fetch(type: QueryType, query: string): Promise<LiveResult>;
  /** How each provider of each chain is doing, for the operator (absent on sources without providers). */
  status?(): ProviderStatus[];
}

/** One call of one provider, for metrics. */
export interface ProviderCall {
  chain: string;
  provider: string;
  outcome: 'ok' | 'empty' | 'not_found' | 'failed' | 'timeout';
  seconds: number;
}

/** One provider of one chain, as the operator sees it. */
export interface ProviderStatus {
  /** The chain: a query type, `geocoding`, or `<kind> price`. */
  chain: string;
  id: string;
  breaker: 'closed' | 'open' | 'half-open';
  /** Its latest failures in this process, newest first (a few). */
  recentFailures: { at: string; message: string }[];
  /** Its token bucket: calls it may make now, of at most `capacity`. */
  tokens: { available: number; capacity: number };
}

export interface CachedLiveResult extends LiveResult {
  /** When the result was fetched, ISO 8601 UTC. */
  fetchedAt: string;
}

/**
 * A cache shared by all agents, keyed by query type and normalised query, with the leases of single-flight
 * across processes. The core decides freshness and prices; a cache only keeps entries and leases.
 *
 * A process-local cache (node-cache) answers `get` from memory, always leads and never waits. A cache
 * shared by several instances (PostgreSQL) keeps this process's entries in front (`peek`) and the shared
 * ones behind (`get`), and lets one instance at a time fetch a key (`lead`), the others waiting for its
 * result (`waitFor`).
 */
export interface LiveCache {
  /**
   * This process's own entry for `key`, without I/O: the hot path. It may be older than one another
   * instance stored since; `get` finds that one.
   */
  peek(key: string): CachedLiveResult | undefined;
  /** The newest entry for `key` this process can find: its own, or one another instance stored. */
  get(key: string): Promise<CachedLiveResult | undefined>;
  /** Stores a paid-for result. Never rejects: a result that cannot be shared is only not shared. */
  set(key: string, value: CachedLiveResult): Promise<void>;
  /**
   * Asks for the fetch of `key` across processes: `leader` when this process holds the key's lease (it
   * fetches, then calls `endFlight`), `follower` when another process holds an unexpired one (`waitFor`
   * it). The caller runs one flight per key at a time in its process; a process-local cache always leads.
   */
  lead(key: string): Promise<'leader' | 'follower'>;
  /**
   * Waits for an entry of `key` newer than `after` (an ISO instant; absent: any entry). Resolves with it
   * once stored, or with undefined as soon as no unexpired lease holds the key (its leader failed, could
   * not pay, or died) or after the longest a lease lasts. A process-local cache resolves undefined at once.
   */
  waitFor(key: string, after: string | undefined): Promise<CachedLiveResult | undefined>;
  /** Ends this process's lease of `key`, after `set` or on failure. Never rejects (a lease also expires). */
  endFlight(key: string): Promise<void>;
  /** How many results the cache holds (every instance's, on a shared cache). */
  entries(): Promise<number>;
  close(): void;
}
