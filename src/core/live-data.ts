/**
 * Live data with a cache whose freshness the caller chooses. The cache is shared by all agents and keyed
 * by query type and normalised query.
 * - A cached result no older than `cache_minutes` is served at the cached price (free). A result may say the upstream cannot have newer
 *   data for a while (daily FX rates); then that floor is applied and the response says so.
 * - Otherwise the upstream is asked and, only once it has answered with valid data, the fresh price is debited.
 *   Both prices and the ledger name come from the operation's table entry (`ChargeContext`).
 *   While a fetch is under way its price is reserved (in memory, not in the ledger), so parallel requests
 *   cannot start more fetches than the balance pays for; a result enters the cache only after its debit.
 * - Single-flight: identical requests that arrive while a fetch for the same key is in flight wait for it
 *   and get its result at the cached price, `from_cache: true`.
 * - Stale-if-error: when the upstreams fail and an older cached result exists, it is served free with
 *   `stale: true`, at the cached price.
 * - `max_cost_cents` below the fresh price means "cached (or already in flight) or nothing": 402.
 * - With an idempotency key, the response is recorded in the debit's transaction (free answers in a
 *   transaction of their own, with the debit of the cached price when it is not 0).
 */
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import { type ChargeContext, type Ledger, type LedgerRef, loadAccount } from './ledger.js';
import type { CachedLiveResult, LiveCache, LiveDataSource } from './live-port.js';
import type { QueryType } from './model.js';
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

/** Errors that mean "this agent could not pay", not "the data could not be had". */
const PAYMENT_REFUSED = new Set(['insufficient_credits', 'daily_limit_reached']);

interface Served {
  fromCache: boolean;
  cost: number;
  stale?: boolean;
  /** Why the cache was used although cache_minutes asked for fresher data. */
  freshnessNote?: string;
}

export function createLiveData(
  store: StorePort,
  ledger: Ledger,
  cache: LiveCache,
  source: LiveDataSource,
  clock: Clock,
) {
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

  /**
   * An answer served from the cache, at the cached price (0: free, so no debit, and the idempotency record,
   * if any, gets a transaction of its own).
   */
  async function answerCached(
    agentId: string,
    result: CachedLiveResult,
    served: Served,
    { charge: price, record }: ChargeContext,
    ref: LedgerRef,
  ): Promise<DataOutput> {
    if (!record && served.cost === 0) {
      const account = await store.read((reader) => reader.getAccount(agentId));
      return view(result, served, account?.balanceCents ?? 0);
    }
    return store.transact(async (tx) => {
      const charge = { cents: served.cost, operation: price.operation, ref };
      const account = await ledger.debit(tx, await loadAccount(tx, agentId), charge);
      const response = view(result, served, account.balanceCents);
      if (record) await record(tx, response);
      return response;
    });
  }

  /** Serves the cache when fresh enough for the request, or when the data cannot be fresher anyway. */
  function fromCache(
    cached: CachedLiveResult | undefined,
    cacheMinutes: number,
    cachedPrice: number,
  ): Served | undefined {
    if (!cached) return undefined;
    const age = ageMs(cached);
    if (cacheMinutes > 0 && age <= cacheMinutes * 60_000) return { fromCache: true, cost: cachedPrice };
    const floorS = cached.refreshFloorS ?? 0;
    if (floorS > 0 && age <= floorS * 1000) {
      return {
        fromCache: true,
        cost: cachedPrice,
        freshnessNote:
          `${cached.source} publishes new data at most every ${Math.round(floorS / 60)} minutes; ` +
          'served from cache free although cache_minutes asked for fresher data.',
      };
    }
    return undefined;
  }

  /** The leader's path: reserve, fetch, debit (and record), cache. */
  async function fetchAndCharge(
    agentId: string,
    type: QueryType,
    query: string,
    key: string,
    { charge: declared, record }: ChargeContext,
  ) {
    const price = declared.cents;
    const [account, spent] = await store.read(async (reader) => {
      const found = await loadAccount(reader, agentId);
      return [found, await ledger.spentToday(reader, found)] as const;
    });
    // Check and reservation happen with no await between them; the debit checks again.
    ledger.checkCanSpend(account, price, reserved.get(agentId) ?? 0, spent);
    reserved.set(agentId, (reserved.get(agentId) ?? 0) + price);
    try {
      const fresh = await source.fetch(type, query);
      const result: CachedLiveResult = { ...fresh, fetchedAt: clock.now().toISOString() };
      const charge = { cents: price, operation: declared.operation, ref: { queryType: type, query } };
      const response = await store.transact(async (tx) => {
        const account = await ledger.debit(tx, await loadAccount(tx, agentId), charge);
        const body = view(result, { fromCache: false, cost: price }, account.balanceCents);
        if (record) await record(tx, body);
        return body;
      });
      cache.set(key, result);
      return { result, response };
    } finally {
      const left = (reserved.get(agentId) ?? 0) - price;
      if (left > 0) reserved.set(agentId, left);
      else reserved.delete(agentId);
    }
  }

  async function fetchData(
    agentId: string,
    input: Input<'DataInput'>,
    ctx: ChargeContext,
  ): Promise<DataOutput> {
    const query = normalizeQuery(input.query);
    const key = cacheKey(input.query_type, query);
    const ref: LedgerRef = { queryType: input.query_type, query };
    const freshPrice = ctx.charge.cents;
    const cachedPrice = ctx.charge.cachedCents ?? 0;
    const cached = cache.get(key);
    const hit = fromCache(cached, input.cache_minutes, cachedPrice);
    if (cached && hit) return answerCached(agentId, cached, hit, ctx, ref);

    const pending = inFlight.get(key);
    if (pending) {
      try {
        const result = await pending;
        return answerCached(agentId, result, { fromCache: true, cost: cachedPrice }, ctx, ref);
      } catch (err) {
        // The leader could not pay: that is the leader's failure, not this request's. Go again.
        if (err instanceof AppError && PAYMENT_REFUSED.has(err.code)) return fetchData(agentId, input, ctx);
        return serveStale(err, cached, agentId, ctx, ref);
      }
    }

    if (input.max_cost_cents !== undefined && input.max_cost_cents < freshPrice) {
      throw new AppError(
        'max_cost_exceeded',
        `No cached result at most ${input.cache_minutes} minutes old exists, and a fresh one costs ` +
          `${freshPrice} cents, more than max_cost_cents ${input.max_cost_cents}; nothing was charged. ` +
          'Raise max_cost_cents, or accept older data with a larger cache_minutes.',
        { required_cents: freshPrice, max_cost_cents: input.max_cost_cents },
      );
    }

    const leader = fetchAndCharge(agentId, input.query_type, query, key, ctx);
    const shared = leader.then((outcome) => outcome.result);
    shared.catch(() => undefined); // followers handle it; an unobserved rejection must not crash
    inFlight.set(key, shared);
    try {
      return (await leader).response;
    } catch (err) {
      return serveStale(err, cached, agentId, ctx, ref);
    } finally {
      inFlight.delete(key);
    }
  }

  /** When every upstream failed, an older cached result is better than nothing: at the cached price, marked stale. */
  async function serveStale(
    err: unknown,
    cached: CachedLiveResult | undefined,
    agentId: string,
    ctx: ChargeContext,
    ref: LedgerRef,
  ) {
    const upstreamDown =
      err instanceof AppError && (err.code === 'upstream_failed' || err.code === 'upstream_timeout');
    if (!upstreamDown || !cached) throw err;
    const cost = ctx.charge.cachedCents ?? 0;
    return answerCached(agentId, cached, { fromCache: true, cost, stale: true }, ctx, ref);
  }

  return { fetchData };
}

export type LiveData = ReturnType<typeof createLiveData>;
