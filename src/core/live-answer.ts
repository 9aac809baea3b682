/**
 * What a live-data answer says, decided without I/O: the cache key of a query, whether a cached result is
 * fresh enough for a request (`cache_minutes`, or a refresh floor), and the answer's fields, `cache_state`
 * and `cached_at` included. The flow that fetches, waits and charges is live-data.ts.
 */
import type { CachedLiveResult } from './live-port.js';
import type { CacheState, QueryType } from './model.js';
import type { Output } from './schemas.js';

/** Unicode NFKC, trimmed, lower-cased, inner whitespace collapsed. */
export function normalizeQuery(query: string): string {
  return query.normalize('NFKC').trim().toLowerCase().replace(/\s+/gu, ' ');
}

export function cacheKey(type: QueryType, normalizedQuery: string): string {
  return `${type}:${normalizedQuery}`;
}

/** `cache_minutes` meaning "a cached result of any age, or nothing". */
export const CACHED_ONLY = -1;

export interface Served {
  fromCache: boolean;
  cost: number;
  state: CacheState;
  stale?: boolean;
  /** Why the cache was used although cache_minutes asked for fresher data. */
  freshnessNote?: string;
}

/** `entry` when it is newer than `known` (any entry when nothing was known). */
export function newer(entry: CachedLiveResult | undefined, known: CachedLiveResult | undefined) {
  if (!entry || (known && Date.parse(entry.fetchedAt) <= Date.parse(known.fetchedAt))) return undefined;
  return entry;
}

type DataOutput = Output<'DataOutput'>;

/**
 * The answer for `result` of a `type` request served as `served`, with the agent's balance after it;
 * `ageMs` is the result's age. Its `data` is in the shape of `type` (the providers normalise into it); the
 * answer echoes `type` as `query_type`, so that a client can tell the shape.
 */
export function answerView(
  type: QueryType,
  result: CachedLiveResult,
  served: Served,
  balance: number,
  ageMs: number,
): DataOutput {
  return {
    success: true,
    query_type: type,
    data: result.data,
    from_cache: served.fromCache,
    cost_cents: served.cost,
    credit_balance_cents: balance,
    fetched_at: result.fetchedAt,
    source: result.source,
    ...(result.asOf === undefined ? {} : { as_of: result.asOf }),
    ...(result.providersAsked === undefined ? {} : { providers_asked: result.providersAsked }),
    cache_age_s: served.fromCache ? Math.max(0, Math.floor(ageMs / 1000)) : 0,
    cache_state: served.state,
    cached_at: result.fetchedAt,
    ...(served.stale ? { stale: true } : {}),
    ...(served.freshnessNote ? { freshness_note: served.freshnessNote } : {}),
  } as DataOutput; // data: the provider's normalised result, in the shape of `type`
}

/**
 * How `cached` (of age `ageMs`) is served to a request that accepts `cacheMinutes` of age: as a hit when fresh
 * enough, or when its source cannot have newer data yet (its refresh floor); else undefined (fetch).
 */
export function servedFromCache(
  cached: CachedLiveResult,
  cacheMinutes: number,
  cachedPrice: number,
  ageMs: number,
): Served | undefined {
  if (cacheMinutes > 0 && ageMs <= cacheMinutes * 60_000) {
    return { fromCache: true, cost: cachedPrice, state: 'hit' };
  }
  const floorS = cached.refreshFloorS ?? 0;
  if (floorS > 0 && ageMs <= floorS * 1000) {
    return {
      fromCache: true,
      cost: cachedPrice,
      state: 'hit',
      freshnessNote:
        `${cached.source} publishes new data at most every ${Math.round(floorS / 60)} minutes; ` +
        'served from cache free although cache_minutes asked for fresher data.',
    };
  }
  return undefined;
}
