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
 *   and get its result at the cached price, `from_cache: true`. In a process, the first request's flight is
 *   a promise the others await; across processes sharing a cache (PostgreSQL), that flight takes the key's
 *   lease from the cache first, and follows the lease holder's flight instead of fetching when another
 *   process holds it (`contend`).
 * - Stale-if-error: when the upstreams fail and an older cached result exists, it is served free with
 *   `stale: true`, at the cached price.
 * - `max_cost_cents` below the fresh price means "cached (or already in flight) or nothing": 402.
 * - `cache_minutes: -1` means "cached only": the newest cached result of any age the cache still holds, or
 *   a fetch already in flight (in this process or, on a shared cache, another), at the cached price; else
 *   404 `not_cached`. It never starts a fetch and never charges more than the cached price.
 * - Every answer says how it was served (`cache_state`: fresh, hit, stale, shared_flight) and when its
 *   result was fetched (`cached_at`, equal to `fetched_at`).
 * - With an idempotency key, the response is kept by the charge that debits it (charge-port.ts; a free
 *   answer too, in a charge of 0 cents).
 */

import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import { type ChargeContext, type Ledger, type LedgerRef, loadAccount } from './ledger.js';
import {
  answerView,
  CACHED_ONLY,
  cacheKey,
  newer,
  normalizeQuery,
  type Served,
  servedFromCache,
} from './live-answer.js';
import type { CachedLiveResult, LiveCache, LiveDataSource } from './live-port.js';
import type { QueryType } from './model.js';
import type { Input, Output } from './schemas.js';
import type { StorePort } from './store-port.js';

export { cacheKey, normalizeQuery } from './live-answer.js';

type DataOutput = Output<'DataOutput'>;

/** Errors that mean "this agent could not pay", not "the data could not be had". */
const PAYMENT_REFUSED = new Set(['insufficient_credits', 'daily_limit_reached']);

/** Rounds a request follows other instances' flights that end without a result before it fetches itself. */
const MAX_FOLLOWS = 3;

/** One data request, as the helpers below need it. */
interface DataRequest {
  agentId: string;
  input: Input<'DataInput'>;
  ctx: ChargeContext;
  /** The normalised query. */
  query: string;
  key: string;
  ref: LedgerRef;
}

/** A flight's result and the answer of the request that ran it. */
interface Outcome {
  result: CachedLiveResult;
  response: DataOutput;
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

  const view = (type: QueryType, result: CachedLiveResult, served: Served, balance: number): DataOutput =>
    answerView(type, result, served, balance, ageMs(result));

  /**
   * An answer served from the cache, at the cached price (0: free, so no debit, and the idempotency record,
   * if any, gets a transaction of its own).
   */
  async function answerCached(
    type: QueryType,
    agentId: string,
    result: CachedLiveResult,
    served: Served,
    { charge: price, record }: ChargeContext,
    ref: LedgerRef,
  ): Promise<DataOutput> {
    if (record?.idempotencyKey === undefined && served.cost === 0) {
      const account = await store.read((reader) => reader.getAccount(agentId));
      return view(type, result, served, account?.balanceCents ?? 0);
    }
    const charge = { cents: served.cost, operation: price.operation, ref };
    return ledger.chargeAnswer(agentId, charge, record, view(type, result, served, 0));
  }

  const fromCache = (cached: CachedLiveResult | undefined, cacheMinutes: number, cachedPrice: number) =>
    cached && servedFromCache(cached, cacheMinutes, cachedPrice, ageMs(cached));

  /** The leader's path: reserve, fetch, debit (and record), cache. */
  async function fetchAndCharge({ agentId, input, ctx, query, key, ref }: DataRequest): Promise<Outcome> {
    const { charge: declared, record } = ctx;
    const price = declared.cents;
    const [account, spent] = await store.read(async (reader) => {
      const found = await loadAccount(reader, agentId);
      return [found, await ledger.spentToday(reader, found)] as const;
    });
    // Check and reservation happen with no await between them; the debit checks again.
    ledger.checkCanSpend(account, price, reserved.get(agentId) ?? 0, spent);
    reserved.set(agentId, (reserved.get(agentId) ?? 0) + price);
    try {
      const fresh = await source.fetch(input.query_type, query);
      const result: CachedLiveResult = { ...fresh, fetchedAt: clock.now().toISOString() };
      const charge = { cents: price, operation: declared.operation, ref };
      const served: Served = { fromCache: false, cost: price, state: 'fresh' };
      const response = await ledger.chargeAnswer(
        agentId,
        charge,
        record,
        view(input.query_type, result, served, 0),
      );
      await cache.set(key, result);
      return { result, response };
    } finally {
      const left = (reserved.get(agentId) ?? 0) - price;
      if (left > 0) reserved.set(agentId, left);
      else reserved.delete(agentId);
    }
  }

  /** Another flight's result, answered at the cached price. */
  async function followed(request: DataRequest, result: CachedLiveResult): Promise<Outcome> {
    const cost = request.ctx.charge.cachedCents ?? 0;
    const response = await answerCached(
      request.input.query_type,
      request.agentId,
      result,
      { fromCache: true, cost, state: 'shared_flight' },
      request.ctx,
      request.ref,
    );
    return { result, response };
  }

  /**
   * This process's one flight for a key. Across processes the cache's lease decides who fetches: the
   * leader fetches and pays; a follower waits for the leader's result and pays the cached price. A follower
   * whose leader ended without a result (it failed, could not pay, or died) asks for the lease again; after
   * MAX_FOLLOWS such rounds it fetches without one rather than wait any longer.
   */
  async function contend(request: DataRequest, known: CachedLiveResult | undefined): Promise<Outcome> {
    for (let round = 1; ; round++) {
      if (round > MAX_FOLLOWS || (await cache.lead(request.key)) === 'leader') {
        try {
          // A flight may have ended between this request's look at the cache and its lease.
          const arrived = newer(await cache.get(request.key), known);
          return arrived ? await followed(request, arrived) : await fetchAndCharge(request);
        } finally {
          await cache.endFlight(request.key);
        }
      }
      const arrived = await cache.waitFor(request.key, known?.fetchedAt);
      if (arrived) return followed(request, arrived);
    }
  }

  /** A request that joins this process's flight for its key: the flight's result at the cached price. */
  async function follow(
    request: DataRequest,
    pending: Promise<CachedLiveResult>,
    known: CachedLiveResult | undefined,
  ): Promise<DataOutput> {
    try {
      return (await followed(request, await pending)).response;
    } catch (err) {
      // The leader could not pay: that is the leader's failure, not this request's. Go again.
      if (err instanceof AppError && PAYMENT_REFUSED.has(err.code)) {
        return fetchData(request.agentId, request.input, request.ctx);
      }
      return serveStale(err, request, known);
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
    // This process's entry first, with no I/O: the hot path.
    const own = cache.peek(key);
    const ownHit = fromCache(own, input.cache_minutes, cachedPrice);
    if (own && ownHit) return answerCached(input.query_type, agentId, own, ownHit, ctx, ref);
    const request: DataRequest = { agentId, input, ctx, query, key, ref };
    if (input.cache_minutes === CACHED_ONLY) return cachedOnly(request, own);
    const pending = inFlight.get(key);
    if (pending) return follow(request, pending, own);

    // Then what other instances stored (a process-local cache has nothing more).
    const cached = await cache.get(key);
    const hit = fromCache(cached, input.cache_minutes, cachedPrice);
    if (cached && hit) return answerCached(input.query_type, agentId, cached, hit, ctx, ref);
    const started = inFlight.get(key); // one may have begun while this request looked
    if (started) return follow(request, started, cached);

    if (input.max_cost_cents !== undefined && input.max_cost_cents < freshPrice) {
      // "Cached or already in flight": a flight on another instance counts too.
      const arrived = await cache.waitFor(key, cached?.fetchedAt);
      if (arrived) return (await followed(request, arrived)).response;
      throw new AppError(
        'max_cost_exceeded',
        `No cached result at most ${input.cache_minutes} minutes old exists, and a fresh one costs ` +
          `${freshPrice} cents, more than max_cost_cents ${input.max_cost_cents}; nothing was charged. ` +
          'Raise max_cost_cents, or accept older data with a larger cache_minutes.',
        { required_cents: freshPrice, max_cost_cents: input.max_cost_cents },
      );
    }

    const leader = contend(request, cached);
    const shared = leader.then((outcome) => outcome.result);
    shared.catch(() => undefined); // followers handle it; an unobserved rejection must not crash
    inFlight.set(key, shared);
    try {
      return (await leader).response;
    } catch (err) {
      return serveStale(err, request, cached);
    } finally {
      inFlight.delete(key);
    }
  }

  /**
   * `cache_minutes: -1`: this process's entry, else a flight in progress (here, then on another instance),
   * else the shared cache's entry, of any age, at the cached price; else 404 `not_cached`. Never fetches: a
   * joined flight that ends without a result is looked past, like an absent entry.
   */
  async function cachedOnly(request: DataRequest, own: CachedLiveResult | undefined): Promise<DataOutput> {
    const { agentId, ctx, key, ref } = request;
    const type = request.input.query_type;
    const hit: Served = { fromCache: true, cost: ctx.charge.cachedCents ?? 0, state: 'hit' };
    if (own) return answerCached(type, agentId, own, hit, ctx, ref);
    const pending = inFlight.get(key);
    const joined = pending && (await pending.catch(() => undefined));
    if (joined) return (await followed(request, joined)).response;
    const cached = await cache.get(key);
    if (cached) return answerCached(type, agentId, cached, hit, ctx, ref);
    const started = inFlight.get(key);
    const arrived =
      (started && (await started.catch(() => undefined))) ?? (await cache.waitFor(key, undefined));
    if (arrived) return (await followed(request, arrived)).response;
    throw new AppError(
      'not_cached',
      'Nothing is cached for this query_type and query, and cache_minutes -1 only serves the cache; ' +
        'nothing was charged. Use cache_minutes 0 or more to fetch it.',
    );
  }

  /** When every upstream failed, an older cached result is better than nothing: at the cached price, marked stale. */
  async function serveStale(err: unknown, request: DataRequest, known: CachedLiveResult | undefined) {
    const upstreamDown =
      err instanceof AppError && (err.code === 'upstream_failed' || err.code === 'upstream_timeout');
    if (!upstreamDown) throw err;
    const cached = known ?? (await cache.get(request.key));
    if (!cached) throw err;
    const cost = request.ctx.charge.cachedCents ?? 0;
    return answerCached(
      request.input.query_type,
      request.agentId,
      cached,
      { fromCache: true, cost, state: 'stale', stale: true },
      request.ctx,
      request.ref,
    );
  }

  return { fetchData };
}

export type LiveData = ReturnType<typeof createLiveData>;
