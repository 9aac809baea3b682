/**
 * Live data with a cache whose freshness the caller chooses. The cache is shared by all agents and keyed
 * by query type and normalised query. A cached result no older than `cache_minutes` is free; otherwise
 * the upstream is asked and, only once it has answered with valid data, 2 cents are debited. While a fetch
 * is under way its price is reserved (in memory, not in the ledger), so parallel requests cannot start
 * more fetches than the balance pays for; a result enters the cache only after its debit has committed.
 */
import type { Clock } from './clock.js';
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

export function createLiveData(store: StorePort, cache: LiveCache, source: LiveDataSource, clock: Clock) {
  /** Cents held for fetches in flight, per agent. */
  const reserved = new Map<string, number>();
  const release = (agentId: string, cents: number) => {
    const left = (reserved.get(agentId) ?? 0) - cents;
    if (left > 0) reserved.set(agentId, left);
    else reserved.delete(agentId);
  };

  function view(
    result: CachedLiveResult,
    fromCache: boolean,
    cost: number,
    balance: number,
  ): Output<'DataOutput'> {
    const ageMs = clock.now().getTime() - Date.parse(result.fetchedAt);
    return {
      success: true,
      data: result.data,
      from_cache: fromCache,
      cost_cents: cost,
      credit_balance_cents: balance,
      fetched_at: result.fetchedAt,
      source: result.source,
      ...(result.asOf === undefined ? {} : { as_of: result.asOf }),
      cache_age_s: fromCache ? Math.max(0, Math.floor(ageMs / 1000)) : 0,
    };
  }

  async function balanceOf(agentId: string): Promise<number> {
    const account = await store.read((reader) => reader.getAccount(agentId));
    return account?.balanceCents ?? 0;
  }

  async function fetchData(agentId: string, input: Input<'DataInput'>): Promise<Output<'DataOutput'>> {
    const query = normalizeQuery(input.query);
    const key = cacheKey(input.query_type, query);
    const cached = cache.get(key);
    if (cached && input.cache_minutes > 0) {
      const ageMs = clock.now().getTime() - Date.parse(cached.fetchedAt);
      if (ageMs <= input.cache_minutes * 60_000) {
        return view(cached, true, PRICES.liveDataCached, await balanceOf(agentId));
      }
    }

    // Refuse before calling the upstream when the agent cannot pay for this fetch on top of those in
    // flight. Check and reservation happen with no await between them; the debit checks again.
    const price = PRICES.liveDataFresh;
    const balance = await balanceOf(agentId);
    const available = balance - (reserved.get(agentId) ?? 0);
    if (available < price) throw insufficientCredits(price, Math.max(0, available));
    reserved.set(agentId, (reserved.get(agentId) ?? 0) + price);
    try {
      const fresh = await source.fetch(input.query_type, query);
      const result: CachedLiveResult = { ...fresh, fetchedAt: clock.now().toISOString() };
      const charge = {
        cents: price,
        operation: 'data' as const,
        ref: { queryType: input.query_type, query },
      };
      const account = await store.transact(async (tx) =>
        debit(tx, await loadAccount(tx, agentId), charge, clock),
      );
      cache.set(key, result);
      return view(result, false, price, account.balanceCents);
    } finally {
      release(agentId, price);
    }
  }

  return { fetchData };
}

export type LiveData = ReturnType<typeof createLiveData>;
