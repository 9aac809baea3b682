/**
 * Ports for live data: where results come from (upstream providers, outside the core) and where they are
 * cached (node-cache, outside the core). The core decides when to use which and what to charge.
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
}

/**
 * Fetches fresh data for a normalised query. Throws AppError: `not_found` (no such city or asset),
 * `upstream_failed` (error status, network error, unparseable or invalid body), `upstream_timeout`.
 */
export interface LiveDataSource {
  fetch(type: QueryType, query: string): Promise<LiveResult>;
}

export interface CachedLiveResult extends LiveResult {
  /** When the result was fetched, ISO 8601 UTC. */
  fetchedAt: string;
}

/** A cache shared by all agents, keyed by query type and normalised query. */
export interface LiveCache {
  get(key: string): CachedLiveResult | undefined;
  set(key: string, value: CachedLiveResult): void;
  close(): void;
}
