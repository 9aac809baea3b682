/**
 * Live data with a cache whose freshness the caller chooses. The cache is shared by all agents and keyed
 * by query type and normalised query.
 * - A cached result no older than `cache_minutes` is free. A result may say the upstream cannot have newer
 *   data for a while (daily FX rates); then that floor is applied and the response says so.
 * - Otherwise the upstream is asked and, only once it has answered with valid data, 2 cents are debited.
 *   While a fetch is under way its price is reserved (in memory, not in the ledger), so parallel requests
 *   cannot start more fetches than the balance pays for; a result enters the cache only after its debit.
 * - Single-flight: identical requests that arrive while a fetch for the same key is in flight wait for it
 *   and get its result free, `from_cache: true`.
 * - Stale-if-error: when the upstreams fail and an older cached result exists, it is served free with
 *   `stale: true`.
 */
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import { debit, insufficientCredits, loadAccount } from './ledger.js';
import type { CachedLiveResult, LiveCache, LiveDataSource } from './live-port.js';
import type { QueryType } from './model.js';
import { PRICES } from './pricing.js';
import type { Input, Output } from './schemas.js';
import type { StorePort } from './store-port.js';

/** Unicode NFKC, trimmed, lower-cased, inner whitespace collapsed. */
export function normalizeQuery(query: string): string {
  return query.normalize('NFKC').trim().toLowerCase().replace(/\s+/gu, ' ');
}

export function cacheKey(type: QueryType, normalizedQuery: string): string {
  return `${type}:${normalizedQuery}`;
}

type DataOutput = Output<'DataOutput'>;

interface Served {
  fromCache: boolean;
  cost: number;
  stale?: boolean;
  /** Why the cache was used although cache_minutes asked for fresher data. */
  freshnessNote?: string;
}

export function createLiveData(store: StorePort, cache: LiveCache, source: LiveDataSource, clock: Clock) {
  /** Cents held for fetches in flight, per agent. */
  const reserved = new Map<string, number>();
  /** Fetches in flight by cache key; they resolve once the result is paid for and cached. */
  const inFlight = new Map<string, Promise<CachedLiveResult>>();

  const ageMs = (result: CachedLiveResult) => clock.now().getTime() - Date.parse(result.fetchedAt);

  function view(result: CachedLiveResult, served: Served, balance: number): DataOutput {
    return {
      success: true,
      data: result.data,
      from_cache: served.fromCache,
      cost_cents: served.cost,
      credit_balance_cents: balance,
      fetched_at: result.fetchedAt,
      source: result.source,
      ...(result.asOf === undefined ? {} : { as_of: result.asOf }),
      cache_age_s: served.fromCache ? Math.max(0, Math.floor(ageMs(result) / 1000)) : 0,
      ...(served.stale ? { stale: true } : {}),
      ...(served.freshnessNote ? { freshness_note: served.freshnessNote } : {}),
    };
  }

  async function balanceOf(agentId: string): Promise<number> {
    const account = await store.read((reader) => reader.getAccount(agentId));
    return account?.balanceCents ?? 0;
  }

  /** Serves the cache when fresh enough for the request, or when the data cannot be fresher anyway. */
  function fromCache(cached: CachedLiveResult | undefined, cacheMinutes: number): Served | undefined {
    if (!cached) return undefined;
    const age = ageMs(cached);
    if (cacheMinutes > 0 && age <= cacheMinutes * 60_000)
      return { fromCache: true, cost: PRICES.liveDataCached };
    const floorS = cached.refreshFloorS ?? 0;
    if (floorS > 0 && age <= floorS * 1000) {
      return {
        fromCache: true,
        cost: PRICES.liveDataCached,
        freshnessNote:
          `${cached.source} publishes new data at most every ${Math.round(floorS / 60)} minutes; ` +
          'served from cache free although cache_minutes asked for fresher data.',
      };
    }
    return undefined;
  }

  /** The leader's path: reserve, fetch, debit, cache. */
  async function fetchAndCharge(agentId: string, type: QueryType, query: string, key: string) {
    const price = PRICES.liveDataFresh;
    const balance = await balanceOf(agentId);
    // Check and reservation happen with no await between them; the debit checks again.
    const available = balance - (reserved.get(agentId) ?? 0);
    if (available < price) throw insufficientCredits(price, Math.max(0, available));
    reserved.set(agentId, (reserved.get(agentId) ?? 0) + price);
    try {
      const fresh = await source.fetch(type, query);
      const result: CachedLiveResult = { ...fresh, fetchedAt: clock.now().toISOString() };
      const charge = { cents: price, operation: 'data' as const, ref: { queryType: type, query } };
      const account = await store.transact(async (tx) =>
        debit(tx, await loadAccount(tx, agentId), charge, clock),
      );
      cache.set(key, result);
      return { result, balance: account.balanceCents };
    } finally {
      const left = (reserved.get(agentId) ?? 0) - price;
      if (left > 0) reserved.set(agentId, left);
      else reserved.delete(agentId);
    }
  }

  async function fetchData(agentId: string, input: Input<'DataInput'>): Promise<DataOutput> {
    const query = normalizeQuery(input.query);
    const key = cacheKey(input.query_type, query);
    const cached = cache.get(key);
    const hit = fromCache(cached, input.cache_minutes);
    if (cached && hit) return view(cached, hit, await balanceOf(agentId));

    const pending = inFlight.get(key);
    if (pending) {
      try {
        const result = await pending;
        return view(result, { fromCache: true, cost: PRICES.liveDataCached }, await balanceOf(agentId));
      } catch (err) {
        // The leader could not pay: that is the leader's failure, not this request's. Go again.
        if (err instanceof AppError && err.code === 'insufficient_credits') return fetchData(agentId, input);
        return serveStale(err, cached, agentId);
      }
    }

    const leader = fetchAndCharge(agentId, input.query_type, query, key);
    const shared = leader.then((outcome) => outcome.result);
    shared.catch(() => undefined); // followers handle it; an unobserved rejection must not crash
    inFlight.set(key, shared);
    try {
      const { result, balance } = await leader;
      return view(result, { fromCache: false, cost: PRICES.liveDataFresh }, balance);
    } catch (err) {
      return serveStale(err, cached, agentId);
    } finally {
      inFlight.delete(key);
    }
  }

  /** When every upstream failed, an older cached result is better than nothing: free, marked stale. */
  async function serveStale(err: unknown, cached: CachedLiveResult | undefined, agentId: string) {
    const upstreamDown =
      err instanceof AppError && (err.code === 'upstream_failed' || err.code === 'upstream_timeout');
    if (!upstreamDown || !cached) throw err;
    return view(
      cached,
      { fromCache: true, cost: PRICES.liveDataCached, stale: true },
      await balanceOf(agentId),
    );
  }

  return { fetchData };
}

export type LiveData = ReturnType<typeof createLiveData>;
