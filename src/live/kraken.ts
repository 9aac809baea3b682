/**
 * Crypto prices from Kraken's public ticker (keyless): `/0/public/Ticker?pair={BASE}{CUR}`. Bitcoin is XBT
 * and Dogecoin XDG there; the result key differs from the requested pair (XBTUSD → XXBTZUSD), so the single
 * key of `result` is taken. Errors arrive as HTTP 200 with a non-empty `error[]`.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, softFailure, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { coinSymbol, type PriceQuery, stockHint } from './price-query.js';
import type { ProviderDescriptor } from './provider-descriptor.js';

export const KRAKEN: Upstream = { id: 'kraken', name: 'Kraken', kind: 'price' };

export const KRAKEN_PROVIDER: ProviderDescriptor = {
  id: KRAKEN.id,
  serves: { price: { kinds: ['crypto'], fetch: fetchKrakenPrice } },
  urls: { kraken: { variable: 'AC_KRAKEN_URL', default: 'https://api.kraken.com' } },
  perMinute: 60,
};

/** Kraken's own asset codes where they differ from the common symbol. */
const KRAKEN_ASSETS: Readonly<Record<string, string>> = { BTC: 'XBT', DOGE: 'XDG' };

const decimal = z
  .string()
  .trim()
  .regex(/^\d+(\.\d+)?$/)
  .transform(Number);

const tickerSchema = z.object({
  error: z.array(z.string()),
  /** `c` is the last trade: [price, lot volume]. */
  result: z.record(z.string(), z.object({ c: z.tuple([decimal], z.string()) })).optional(),
});

function unknownPair(query: PriceQuery): AppError {
  const { asset, quote } = query;
  return new AppError(
    'not_found',
    `Kraken trades no "${asset}" against ${quote}; use a coin symbol like "btc" or a name like "bitcoin".${stockHint(query)}`,
    { source: KRAKEN.id },
  );
}

export async function fetchKrakenPrice(
  http: HttpClient,
  config: LiveConfig,
  parsed: PriceQuery,
  deadline?: number,
): Promise<LiveResult> {
  const coin = coinSymbol(parsed.asset);
  if (!coin) throw unknownPair(parsed);
  const base = KRAKEN_ASSETS[coin.symbol] ?? coin.symbol;
  const url = buildUrl(baseUrl(config, 'kraken', KRAKEN), '/0/public/Ticker', {
    pair: `${base}${parsed.quote}`,
  });
  const body = await http.getJson(KRAKEN, url, tickerSchema, { deadline });

  if (body.error.length > 0) {
    if (body.error.some((error) => error.startsWith('EQuery:Unknown asset pair'))) {
      throw unknownPair(parsed);
    }
    throw softFailure(KRAKEN, 'with an error', new Error(`Kraken error: ${body.error.join('; ')}`));
  }
  const tickers = Object.values(body.result ?? {});
  const [ticker] = tickers;
  if (!ticker || tickers.length !== 1) {
    throw softFailure(KRAKEN, `with ${tickers.length} tickers instead of one`);
  }
  return {
    source: KRAKEN.id,
    data: {
      asset: { name: coin.name, symbol: coin.symbol, kind: 'crypto' },
      price: ticker.c[0],
      currency: parsed.quote,
      as_of: null,
    },
  };
}
