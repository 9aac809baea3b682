/**
 * Crypto spot prices from Coinbase (keyless): `/v2/prices/{BASE}-{CUR}/spot` → `data{amount, base,
 * currency}`, the amount a decimal string and no timestamp, so `as_of` is null.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { coinSymbol, type PriceQuery, stockHint } from './price-query.js';
import type { ProviderDescriptor } from './provider-descriptor.js';

export const COINBASE: Upstream = { id: 'coinbase', name: 'Coinbase', kind: 'price' };

export const COINBASE_PROVIDER: ProviderDescriptor = {
  id: COINBASE.id,
  serves: { price: { kinds: ['crypto'], fetch: fetchCoinbasePrice } },
  urls: { coinbase: { variable: 'AC_COINBASE_URL', default: 'https://api.coinbase.com' } },
  perMinute: 300,
};

const spotSchema = z.object({
  data: z.object({
    amount: z
      .string()
      .trim()
      .regex(/^\d+(\.\d+)?$/)
      .transform(Number),
    base: z.string(),
    currency: z.string(),
  }),
});

function unknownPair(query: PriceQuery): AppError {
  const { asset, quote } = query;
  return new AppError(
    'not_found',
    `Coinbase has no ${quote} price for "${asset}"; use a coin symbol like "btc" or a name like "bitcoin".${stockHint(query)}`,
    { source: COINBASE.id },
  );
}

export async function fetchCoinbasePrice(
  http: HttpClient,
  config: LiveConfig,
  parsed: PriceQuery,
  deadline?: number,
): Promise<LiveResult> {
  const coin = coinSymbol(parsed.asset);
  if (!coin) throw unknownPair(parsed);
  const pair = `${coin.symbol}-${parsed.quote}`;
  const url = buildUrl(baseUrl(config, 'coinbase', COINBASE), `/v2/prices/${encodeURIComponent(pair)}/spot`);
  const { data } = await http.getJson(COINBASE, url, spotSchema, {
    deadline,
    // 404: unknown currency; 400: invalid pair.
    onStatus: (status) => (status === 404 || status === 400 ? unknownPair(parsed) : undefined),
  });
  return {
    source: COINBASE.id,
    data: {
      asset: { name: coin.name, symbol: coin.symbol, kind: 'crypto' },
      price: data.amount,
      currency: parsed.quote,
      as_of: null,
    },
  };
}
