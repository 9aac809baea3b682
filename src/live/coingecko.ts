/**
 * Crypto prices from CoinGecko: resolve the asked name or symbol to a coin id with /search, then read
 * /simple/price. Sends the demo key when one is configured; an empty `{}` answer counts as a failure.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream, upstreamLabel } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { type PriceQuery, stockHint } from './price-query.js';
import type { ProviderDescriptor } from './provider-descriptor.js';
import { cleanText } from './text.js';

export const COINGECKO: Upstream = { id: 'coingecko', name: 'CoinGecko', kind: 'price' };

/** The demo key is optional: it raises the published limit, so the bucket too. */
export const COINGECKO_PROVIDER: ProviderDescriptor = {
  id: COINGECKO.id,
  serves: { price: { kinds: ['crypto'], fetch: fetchCryptoPrice } },
  urls: { coingecko: { variable: 'AC_COINGECKO_URL', default: 'https://api.coingecko.com' } },
  apiKey: { variable: 'AC_COINGECKO_API_KEY', requiredToJoin: false },
  perMinute: 8,
  perMinuteWithKey: 25,
};

const coinSchema = z.object({
  id: z.string().min(1),
  name: z.string(),
  symbol: z.string(),
  market_cap_rank: z.number().nullish(),
});
export type Coin = z.infer<typeof coinSchema>;

const searchSchema = z.object({ coins: z.array(coinSchema) });

/** `{bitcoin: {eur: 57000.1, last_updated_at: 1763700000}}`; unknown ids are simply absent. */
const simplePriceSchema = z.record(z.string(), z.record(z.string(), z.number().nullable()));

/** Exact id, then exact symbol (best market-cap rank, unranked last), then exact name, then the first. */
export function pickCoin(coins: readonly Coin[], asked: string): Coin | undefined {
  const wanted = asked.toLowerCase();
  const byId = coins.find((coin) => coin.id.toLowerCase() === wanted);
  if (byId) return byId;
  const rank = (coin: Coin) => coin.market_cap_rank ?? Number.POSITIVE_INFINITY;
  const bySymbol = coins
    .filter((coin) => coin.symbol.toLowerCase() === wanted)
    .reduce<Coin | undefined>(
      (best, coin) => (best === undefined || rank(coin) < rank(best) ? coin : best),
      undefined,
    );
  if (bySymbol) return bySymbol;
  return coins.find((coin) => coin.name.toLowerCase() === wanted) ?? coins[0];
}

/** No such coin; for a ticker-shaped query, also that stocks need a Finnhub key (none is configured then). */
function noSuchAsset(query: PriceQuery): string {
  return `No asset called "${query.asset}" was found; use a coin name like "bitcoin", a symbol like "btc", or an ISO currency code like "eur".${stockHint(query)}`;
}

export async function fetchCryptoPrice(
  http: HttpClient,
  config: LiveConfig,
  query: PriceQuery,
  deadline?: number,
): Promise<LiveResult> {
  const headers: Record<string, string> = {};
  const key = config.apiKeys?.[COINGECKO.id];
  if (key) headers['x-cg-demo-api-key'] = key;

  const base = baseUrl(config, 'coingecko', COINGECKO);
  const searchUrl = buildUrl(base, '/api/v3/search', { query: query.asset });
  const { coins } = await http.getJson(COINGECKO, searchUrl, searchSchema, { headers, deadline });
  const coin = pickCoin(coins, query.asset);
  if (!coin) {
    throw new AppError('not_found', noSuchAsset(query), { source: COINGECKO.id });
  }

  const vs = query.quote.toLowerCase();
  const priceUrl = buildUrl(base, '/api/v3/simple/price', {
    ids: coin.id,
    vs_currencies: vs,
    include_last_updated_at: 'true',
    include_24hr_change: 'true',
  });
  const prices = await http.getJson(COINGECKO, priceUrl, simplePriceSchema, { headers, deadline });
  const entry = prices[coin.id];
  const price = entry?.[vs];
  if (typeof price !== 'number' || !Number.isFinite(price)) {
    throw new AppError(
      'upstream_failed',
      `${upstreamLabel(COINGECKO)} returned no ${query.quote} price for "${coin.id}"; nothing was charged, try again later.`,
      { source: COINGECKO.id },
    );
  }
  const updated = entry?.last_updated_at;
  const asOf = typeof updated === 'number' ? new Date(updated * 1000).toISOString() : undefined;
  return {
    source: COINGECKO.id,
    ...(asOf ? { asOf } : {}),
    data: {
      asset: { name: cleanText(coin.name), symbol: coin.symbol.toUpperCase(), kind: 'crypto', id: coin.id },
      price,
      currency: query.quote,
      as_of: asOf ?? null,
      change_24h_pct: typeof entry?.[`${vs}_24h_change`] === 'number' ? entry[`${vs}_24h_change`] : null,
    },
  };
}
