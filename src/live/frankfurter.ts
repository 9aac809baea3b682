/**
 * Fiat exchange rates from Frankfurter (ECB reference rates, keyless, one update per ECB working day),
 * normalised into the documented price `data` contract.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { FIAT_CURRENCIES, type PriceQuery } from './price-query.js';
import type { ProviderDescriptor } from './provider-descriptor.js';

export const FRANKFURTER: Upstream = { id: 'frankfurter', name: 'Frankfurter', kind: 'price' };

export const FRANKFURTER_PROVIDER: ProviderDescriptor = {
  id: FRANKFURTER.id,
  serves: { price: { kinds: ['fiat'], fetch: fetchFiatPrice } },
  urls: { frankfurter: { variable: 'AC_FRANKFURTER_URL', default: 'https://api.frankfurter.dev' } },
  perMinute: 60,
};

const latestSchema = z.object({
  base: z.string(),
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  rates: z.record(z.string(), z.number()),
});

function noRate(base: string, quote: string): AppError {
  return new AppError(
    'not_found',
    `No exchange rate from ${base} to ${quote} was found; ask for two different ISO currency codes, e.g. "eur to usd".`,
    { source: FRANKFURTER.id },
  );
}

export async function fetchFiatPrice(
  http: HttpClient,
  config: LiveConfig,
  query: PriceQuery,
  deadline?: number,
): Promise<LiveResult> {
  const { asset: base, quote } = query;
  const url = buildUrl(baseUrl(config, 'frankfurter', FRANKFURTER), '/v1/latest', { base, symbols: quote });
  const body = await http.getJson(FRANKFURTER, url, latestSchema, {
    deadline,
    // 404: unknown currency; 422: bad pair.
    onStatus: (status) => (status === 404 || status === 422 ? noRate(base, quote) : undefined),
  });
  const price = body.rates[quote];
  if (price === undefined) throw noRate(base, quote);
  const asOf = `${body.date}T00:00:00.000Z`;
  return {
    source: FRANKFURTER.id,
    asOf,
    // The ECB publishes once a working day: asking again within the hour cannot give a newer rate.
    refreshFloorS: 3600,
    data: {
      asset: { name: FIAT_CURRENCIES[base] ?? base, symbol: base, kind: 'fiat' },
      price,
      currency: quote,
      as_of: asOf,
    },
  };
}
