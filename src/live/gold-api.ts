/**
 * Precious-metal spot prices from gold-api.com (keyless, small third party without an SLA):
 * `/price/{XAU|XAG|XPT|XPD}` → `{price, symbol, updatedAt}`, in USD per troy ounce. Only USD is served: no
 * conversion, so another quote currency is `not_found`.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, softFailure, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { METALS, type PriceQuery } from './price-query.js';
import type { ProviderDescriptor } from './provider-descriptor.js';

export const GOLD_API: Upstream = { id: 'gold-api', name: 'gold-api.com', kind: 'price' };

export const GOLD_API_PROVIDER: ProviderDescriptor = {
  id: GOLD_API.id,
  serves: { price: { kinds: ['metal'], fetch: fetchGoldApiPrice } },
  urls: { goldApi: { variable: 'AC_GOLD_API_URL', default: 'https://api.gold-api.com' } },
  perMinute: 30,
};

const priceSchema = z.object({
  price: z.number().positive(),
  symbol: z.string(),
  updatedAt: z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'a date'),
});

export async function fetchGoldApiPrice(
  http: HttpClient,
  config: LiveConfig,
  parsed: PriceQuery,
  deadline?: number,
): Promise<LiveResult> {
  const symbol = parsed.asset.toUpperCase();
  const name = METALS[symbol];
  if (!name) {
    throw new AppError(
      'not_found',
      `No metal called "${parsed.asset}" is served; ask for gold, silver, platinum or palladium.`,
      { source: GOLD_API.id },
    );
  }
  if (parsed.quote !== 'USD') {
    throw new AppError(
      'not_found',
      `Metal prices are served in USD only, not ${parsed.quote}; ask e.g. "${name.toLowerCase()}" or "${name.toLowerCase()} in usd".`,
      { source: GOLD_API.id },
    );
  }
  const url = buildUrl(baseUrl(config, 'goldApi', GOLD_API), `/price/${symbol}`);
  const body = await http.getJson(GOLD_API, url, priceSchema, { deadline });
  if (body.symbol.toUpperCase() !== symbol) {
    throw softFailure(GOLD_API, 'for another metal');
  }
  const asOf = new Date(body.updatedAt).toISOString();
  return {
    source: GOLD_API.id,
    asOf,
    data: {
      asset: { name, symbol, kind: 'metal' },
      price: body.price,
      currency: 'USD',
      unit: 'troy_ounce',
      as_of: asOf,
    },
  };
}
