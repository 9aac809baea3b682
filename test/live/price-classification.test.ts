/**
 * Which kind a price query is, and so which chain (its first provider) prices it, with a Finnhub key and
 * without; then the plain-ticker scenario of issue 14 end to end against fakes.
 */
import { describe, expect, it } from 'vitest';
import type { LiveConfig } from '../../src/live/live-config.js';
import { createChains, createLiveDataSource } from '../../src/live/live-data-source.js';
import { KNOWN_COINS, tickerShape } from '../../src/live/price-classification.js';
import { parsePriceQuery } from '../../src/live/price-query.js';
import { PROVIDER_IDS } from '../../src/live/providers.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import {
  COINBASE_NOT_FOUND,
  FINNHUB_AAPL,
  FINNHUB_UNKNOWN,
  KRAKEN_UNKNOWN_PAIR,
} from '../fixtures/live/exchanges.js';
import { appErrorOf, liveConfig } from './helpers.js';

const KEY = 'fh-test-key';
const WITH_KEY: Partial<LiveConfig> = { apiKeys: { finnhub: KEY }, providers: { ...PROVIDER_IDS } };
const WITHOUT_KEY: Partial<LiveConfig> = { providers: { ...PROVIDER_IDS } };

/** `kind → first provider of its chain` ("none": no chain, a 404 naming AC_FINNHUB_API_KEY). */
function route(query: string, extra: Partial<LiveConfig>): { asset: string; to: string } {
  const { prices } = createChains(liveConfig({}, extra));
  const parsed = parsePriceQuery(query, { stocks: prices.has('stock') });
  return { asset: parsed.asset, to: `${parsed.kind}→${prices.get(parsed.kind)?.providerIds[0] ?? 'none'}` };
}

const CG = 'crypto→coingecko';
const FH = 'stock→finnhub';
const NONE = 'stock→none';
const FX = 'fiat→frankfurter';
const METAL = 'metal→gold-api';

describe('price classification: query → kind → provider', () => {
  it.each([
    // coins, by symbol and by name
    ['bitcoin', 'bitcoin', CG, CG],
    ['btc', 'btc', CG, CG],
    ['BTC', 'btc', CG, CG],
    ['ethereum in eur', 'ethereum', CG, CG],
    ['sol', 'sol', CG, CG],
    ['doge', 'doge', CG, CG],
    ['pepe', 'pepe', CG, CG],
    ['xrp', 'xrp', CG, CG],
    ['ripple', 'ripple', CG, CG],
    ['usd coin', 'usd coin', CG, CG],
    ['shiba inu', 'shiba inu', CG, CG],
    ['wrapped bitcoin', 'wrapped bitcoin', CG, CG],
    ['1inch', '1inch', CG, CG],
    ['bitcoinz', 'bitcoinz', CG, CG],
    // a coin symbol that is also a ticker keeps its crypto meaning…
    ['eth', 'eth', CG, CG],
    ['link', 'link', CG, CG],
    ['dash', 'dash', CG, CG],
    ['near', 'near', CG, CG],
    ['sand', 'sand', CG, CG],
    // …unless marked as a stock
    ['eth stock', 'ETH', FH, NONE],
    ['$link', 'LINK', FH, NONE],
    ['shares of dash', 'DASH', FH, NONE],
    ['gold stock', 'GOLD', FH, NONE],
    // plain tickers: stocks when a stock provider is configured, else tried as a (small) coin
    ['aapl', 'AAPL', FH, CG],
    ['AAPL', 'AAPL', FH, CG],
    ['msft', 'MSFT', FH, CG],
    ['f', 'F', FH, CG],
    ['googl', 'GOOGL', FH, CG],
    ['nvda price', 'NVDA', FH, CG],
    // suffixed tickers (share class, exchange) are stocks only
    ['brk.b', 'BRK.B', FH, NONE],
    ['sap.de', 'SAP.DE', FH, NONE],
    ['vod.l', 'VOD.L', FH, NONE],
    ['shop.to', 'SHOP.TO', FH, NONE],
    // marked tickers and company names
    ['$aapl', 'AAPL', FH, NONE],
    ['aapl stock', 'AAPL', FH, NONE],
    ['shares of msft', 'MSFT', FH, NONE],
    ['apple stock', 'AAPL', FH, NONE],
    ['tesla shares', 'TSLA', FH, NONE],
    ['shares of berkshire hathaway', 'BRK.B', FH, NONE],
    ['apple', 'AAPL', FH, NONE],
    ['microsoft', 'MSFT', FH, NONE],
    // fiat pairs
    ['eur', 'EUR', FX, FX],
    ['eur/usd', 'EUR', FX, FX],
    ['usd jpy', 'USD', FX, FX],
    ['gbp exchange rate', 'GBP', FX, FX],
    ['chf', 'CHF', FX, FX],
    // metals, and coins backed by them
    ['gold', 'XAU', METAL, METAL],
    ['xau', 'XAU', METAL, METAL],
    ['silver in eur', 'XAG', METAL, METAL],
    ['platinum price', 'XPT', METAL, METAL],
    ['tether gold', 'tether gold', CG, CG],
    ['xaut', 'xaut', CG, CG],
    ['paxg', 'paxg', CG, CG],
  ])('%s (%s): with a Finnhub key %s, without %s', (query, asset, withKey, withoutKey) => {
    const keyed = route(query, WITH_KEY);
    const unkeyed = route(query, WITHOUT_KEY);
    expect(keyed.to).toBe(withKey);
    expect(unkeyed.to).toBe(withoutKey);
    // A stock is asked under its ticker, a coin as the query named it.
    expect(keyed.asset).toBe(asset);
    expect(unkeyed.asset).toBe(withKey === FH && withoutKey === CG ? asset.toLowerCase() : asset);
  });

  it('remembers, for a plain ticker tried as a coin, the stock it could be', () => {
    expect(parsePriceQuery('aapl')).toEqual({ asset: 'aapl', kind: 'crypto', quote: 'USD', ticker: 'AAPL' });
    expect(parsePriceQuery('btc')).toEqual({ asset: 'btc', kind: 'crypto', quote: 'USD' });
    expect(parsePriceQuery('aapl', { stocks: true })).toEqual({ asset: 'AAPL', kind: 'stock', quote: 'USD' });
  });

  it('knows about a hundred coins, none of them shaped like a suffixed ticker', () => {
    expect(KNOWN_COINS.size).toBeGreaterThanOrEqual(100);
    expect(KNOWN_COINS.size).toBeLessThanOrEqual(150);
    for (const symbol of KNOWN_COINS.keys()) expect(tickerShape(symbol)).not.toBe('suffixed');
  });
});

describe('a plain ticker against fakes (issue 14)', () => {
  const up = useFakeUpstream({
    routes: {
      '/api/v1/quote': { json: FINNHUB_AAPL },
      '/api/v3/search': { json: { coins: [] } },
    },
  });
  const PRICE = ['frankfurter', 'coingecko', 'gold-api', 'finnhub'];
  const source = (keyed: boolean) =>
    createLiveDataSource(
      liveConfig(
        { coingecko: up.url, finnhub: up.url },
        {
          providers: { ...PROVIDER_IDS, price: PRICE },
          ...(keyed ? { apiKeys: { finnhub: KEY } } : {}),
        },
      ),
    );
  const paths = () => up.requests.map((request) => request.path);

  it('with a Finnhub key, "AAPL" is priced by Finnhub as the stock AAPL', async () => {
    const result = await source(true).fetch('price', 'AAPL');
    expect(result.source).toBe('finnhub');
    expect(result.data).toMatchObject({
      asset: { symbol: 'AAPL', kind: 'stock' },
      price: 261.74,
      currency: 'USD',
    });
    expect(paths()).toEqual(['/api/v1/quote']);
    expect(up.requests[0]?.query).toEqual({ symbol: 'AAPL', token: KEY });
  });

  it('with a Finnhub key, "msft" that Finnhub does not know is a stock 404', async () => {
    up.route('/api/v1/quote', { json: FINNHUB_UNKNOWN });
    const err = await appErrorOf(source(true).fetch('price', 'msft'));
    expect(err.code).toBe('not_found');
    expect(err.message).toContain('No stock with the ticker "MSFT"');
    expect(paths()).toEqual(['/api/v1/quote']);
  });

  it('with a Finnhub key, a coin symbol that is also a ticker stays a coin', async () => {
    const err = await appErrorOf(source(true).fetch('price', 'link'));
    expect(err.message).toContain('No asset called "link"');
    expect(err.message).not.toContain('AC_FINNHUB_API_KEY');
    expect(paths()).toEqual(['/api/v3/search']);
  });

  it('without a key, "AAPL" is tried as a coin and the 404 says stocks need AC_FINNHUB_API_KEY', async () => {
    const err = await appErrorOf(source(false).fetch('price', 'AAPL'));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      'No asset called "aapl" was found; use a coin name like "bitcoin", a symbol like "btc", or an ISO currency code like "eur". If you meant the stock AAPL: stock prices need a Finnhub key (AC_FINNHUB_API_KEY), which the operator has not set.',
    );
    expect(paths()).toEqual(['/api/v3/search']);
  });

  it('without a key and CoinGecko down, the exchanges\' 404 for "AAPL" says stocks need AC_FINNHUB_API_KEY too', async () => {
    up.route('/api/v3/search', { status: 500, json: { error: 'boom' } });
    up.route('/v2/prices/AAPL-USD/spot', { status: 404, json: COINBASE_NOT_FOUND });
    up.route('/0/public/Ticker', { json: KRAKEN_UNKNOWN_PAIR });
    const chain = createLiveDataSource(
      liveConfig(
        { coingecko: up.url, coinbase: up.url, kraken: up.url },
        { providers: { ...PROVIDER_IDS, price: ['coingecko', 'coinbase', 'kraken'] } },
      ),
    );
    const err = await appErrorOf(chain.fetch('price', 'AAPL'));
    expect(err.code).toBe('not_found');
    expect(err.message).toMatch(
      /^Coinbase has no USD price for "aapl".* If you meant the stock AAPL: .*AC_FINNHUB_API_KEY/,
    );
    expect(new Set(paths())).toEqual(
      new Set(['/api/v3/search', '/v2/prices/AAPL-USD/spot', '/0/public/Ticker']),
    );
    // A name that is not ticker-shaped gets no stock hint.
    const plain = await appErrorOf(chain.fetch('price', 'not a coin at all'));
    expect(plain.message).not.toContain('AC_FINNHUB_API_KEY');
  });

  it('without a key, a stock-only query ("sap.de", "apple stock") is a 404 naming AC_FINNHUB_API_KEY, no upstream asked', async () => {
    for (const query of ['sap.de', 'apple stock', '$aapl']) {
      const err = await appErrorOf(source(false).fetch('price', query));
      expect(err.code).toBe('not_found');
      expect(err.message).toMatch(/^Stock prices .*AC_FINNHUB_API_KEY/);
    }
    expect(paths()).toEqual([]);
  });
});
