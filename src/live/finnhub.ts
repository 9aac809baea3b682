/**
 * Stock quotes from Finnhub (keyed, free tier 60 calls/min): `/api/v1/quote?symbol={TICKER}&token={key}` →
 * `{c, d, dp, h, l, o, pc, t}` in USD. An unknown ticker answers 200 with `c: 0`, which is `not_found`.
 * Without a key, stock queries are not served at all.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream, upstreamLabel } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import type { PriceQuery } from './price-query.js';
import type { ProviderDescriptor } from './provider-descriptor.js';

export const FINNHUB: Upstream = { id: 'finnhub', name: 'Finnhub', kind: 'price' };

/** Stocks have no other provider: without its key they are not served at all. */
export const FINNHUB_PROVIDER: ProviderDescriptor = {
  id: FINNHUB.id,
  serves: { price: { kinds: ['stock'], fetch: fetchFinnhubPrice } },
  urls: { finnhub: { variable: 'AC_FINNHUB_URL', default: 'https://finnhub.io' } },
  apiKey: { variable: 'AC_FINNHUB_API_KEY', requiredToJoin: true },
  perMinute: 50,
};

export const NO_FINNHUB_KEY =
  'Stock prices need a Finnhub key: the operator sets AC_FINNHUB_API_KEY; without it stock queries are not served.';

const quoteSchema = z.object({
  /** Current price; 0 for an unknown symbol. */
  c: z.number(),
  /** Change and percent change since the previous close; null for an unknown symbol. */
  d: z.number().nullish(),
  dp: z.number().nullish(),
  /** Previous close. */
  pc: z.number().nullish(),
  /** Epoch seconds of the quote. */
  t: z.number().nullish(),
});

function unknownTicker(ticker: string): AppError {
  return new AppError(
    'not_found',
    `No stock with the ticker "${ticker}" was found; use a US ticker such as "aapl stock" or "$msft".`,
    { source: FINNHUB.id },
  );
}

function statusError(ticker: string, status: number): AppError | undefined {
  if (status === 401) {
    return new AppError(
      'upstream_failed',
      `${upstreamLabel(FINNHUB)} rejected the configured key (HTTP 401); nothing was charged, the operator must check AC_FINNHUB_API_KEY.`,
      { source: FINNHUB.id, upstream_status: status },
    );
  }
  // 403: a symbol the plan does not cover (e.g. most non-US listings on the free tier).
  if (status === 403) {
    return new AppError(
      'not_found',
      `Finnhub does not serve "${ticker}" on the configured plan; use a US ticker such as "aapl stock".`,
      { source: FINNHUB.id, upstream_status: status },
    );
  }
  return undefined;
}

export async function fetchFinnhubPrice(
  http: HttpClient,
  config: LiveConfig,
  parsed: PriceQuery,
  deadline?: number,
): Promise<LiveResult> {
  const key = config.apiKeys?.[FINNHUB.id];
  if (!key) throw new AppError('not_found', NO_FINNHUB_KEY, { source: FINNHUB.id });
  const ticker = parsed.asset.toUpperCase();
  if (parsed.quote !== 'USD') {
    throw new AppError(
      'not_found',
      `Stock prices are served in USD only, not ${parsed.quote}; ask e.g. "${ticker.toLowerCase()} stock".`,
      { source: FINNHUB.id },
    );
  }
  const url = buildUrl(baseUrl(config, 'finnhub', FINNHUB), '/api/v1/quote', { symbol: ticker, token: key });
  const body = await http.getJson(FINNHUB, url, quoteSchema, {
    deadline,
    onStatus: (status) => statusError(ticker, status),
  });
  if (body.c === 0 || !Number.isFinite(body.c)) throw unknownTicker(ticker);
  const asOf = body.t ? new Date(body.t * 1000).toISOString() : undefined;
  return {
    source: FINNHUB.id,
    ...(asOf ? { asOf } : {}),
    data: {
      asset: { name: ticker, symbol: ticker, kind: 'stock' },
      price: body.c,
      currency: 'USD',
      as_of: asOf ?? null,
      change_24h_pct: body.dp ?? null,
      previous_close: body.pc ?? null,
    },
  };
}
