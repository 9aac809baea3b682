import { describe, expect, it } from 'vitest';
import { fetchKrakenPrice } from '../../src/live/kraken.js';
import { httpClientFor } from '../../src/live/live-data-source.js';
import { parsePriceQuery } from '../../src/live/price-query.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { KRAKEN_UNAVAILABLE, KRAKEN_UNKNOWN_PAIR, KRAKEN_XBTUSD } from '../fixtures/live/exchanges.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

const TICKER = '/0/public/Ticker';

describe('price (Kraken)', () => {
  const kraken = useFakeUpstream({
    routes: {
      [TICKER]: { json: KRAKEN_XBTUSD },
    },
  });

  const fetch = (query: string, deadline?: number) => {
    const config = liveConfig({ kraken: kraken.url });
    return fetchKrakenPrice(httpClientFor(config), config, parsePriceQuery(query), deadline);
  };

  it('asks for XBT, takes the single result key and reads c[0] as a number', async () => {
    expect(await fetch('bitcoin')).toEqual({
      source: 'kraken',
      data: {
        asset: { name: 'Bitcoin', symbol: 'BTC', kind: 'crypto' },
        price: 64000,
        currency: 'USD',
        as_of: null,
      },
    });
    const [request] = kraken.requests;
    expect(request?.path).toBe(TICKER);
    expect(request?.query).toEqual({ pair: 'XBTUSD' });
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
  });

  it.each([
    ['eth in eur', 'ETHEUR'],
    ['dogecoin', 'XDGUSD'],
    ['sol/gbp', 'SOLGBP'],
  ])('maps "%s" to the pair %s', async (query, pair) => {
    kraken.route(TICKER, { json: { error: [], result: { [`X${pair}`]: { c: ['2.25', '10'] } } } });
    const result = await fetch(query);
    expect(kraken.requests[0]?.query.pair).toBe(pair);
    expect(result.data).toMatchObject({ price: 2.25 });
  });

  it('is not_found on EQuery:Unknown asset pair (HTTP 200)', async () => {
    kraken.route(TICKER, { json: KRAKEN_UNKNOWN_PAIR });
    const err = await appErrorOf(fetch('btc in huf'));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      'Kraken trades no "btc" against HUF; use a coin symbol like "btc" or a name like "bitcoin".',
    );
    expect(err.details).toEqual({ source: 'kraken' });
    expect(kraken.requests).toHaveLength(1);
  });

  it('fails on any other error[] entry, keeping it for the logs only', async () => {
    for (const json of [KRAKEN_UNAVAILABLE, { error: ['EAPI:Rate limit exceeded'], result: {} }]) {
      kraken.route(TICKER, { json });
      const err = await appErrorOf(fetch('btc'));
      expect(err.code).toBe('upstream_failed');
      expect(err.message).toBe(
        'The price upstream (Kraken) answered with an error; nothing was charged, try again later.',
      );
      expect(err.message).not.toContain('EService');
      expect(String((err.cause as Error).message)).toContain(json.error[0]);
    }
  });

  it('fails on an empty result or more than one ticker', async () => {
    kraken.route(TICKER, { json: { error: [], result: {} } });
    expect((await appErrorOf(fetch('btc'))).message).toContain('0 tickers instead of one');
    kraken.route(TICKER, { json: { error: [] } });
    expect((await appErrorOf(fetch('btc'))).code).toBe('upstream_failed');
    const two = { XXBTZUSD: { c: ['1', '1'] }, XBTUSD: { c: ['2', '1'] } };
    kraken.route(TICKER, { json: { error: [], result: two } });
    expect((await appErrorOf(fetch('btc'))).message).toContain('2 tickers instead of one');
  });

  it('fails on 500, 429 with Retry-After, HTML with 200, malformed and schema-invalid JSON', async () => {
    kraken.route(TICKER, { status: 500, text: 'Internal Server Error', contentType: 'text/plain' });
    expect((await appErrorOf(fetch('btc'))).details).toEqual({ source: 'kraken', upstream_status: 500 });
    expect(kraken.requests).toHaveLength(3);

    kraken.route(TICKER, { status: 429, headers: { 'retry-after': '15' }, json: { error: [] } });
    const limited = await appErrorOf(fetch('btc'));
    expect(limited.details).toEqual({ source: 'kraken', upstream_status: 429, retry_after_s: 15 });

    kraken.route(TICKER, { text: '<html><body>Attention Required! | Cloudflare</body></html>' });
    expect((await appErrorOf(fetch('btc'))).message).toContain('not JSON');

    kraken.route(TICKER, { text: '{"error":[],"result":{', contentType: 'application/json' });
    expect((await appErrorOf(fetch('btc'))).code).toBe('upstream_failed');

    const invalid = [{ result: KRAKEN_XBTUSD.result }, { error: [], result: { XXBTZUSD: { c: [64000] } } }];
    for (const json of invalid) {
      kraken.route(TICKER, { json });
      expect((await appErrorOf(fetch('btc'))).message).toContain('unexpected format');
    }
  });

  it('is not_found without a request for an asset that is no symbol', async () => {
    expect((await appErrorOf(fetch('wrapped bitcoin'))).code).toBe('not_found');
    expect(kraken.requests).toHaveLength(0);
  });

  it('stops at the deadline and fails on a refused connection', async () => {
    kraken.route(TICKER, { json: KRAKEN_XBTUSD, delayMs: 1000 });
    const started = Date.now();
    expect((await appErrorOf(fetch('btc', Date.now() + 250))).code).toBe('upstream_timeout');
    expect(Date.now() - started).toBeLessThan(800);

    const config = liveConfig({ kraken: await closedPortUrl() });
    const refused = await appErrorOf(fetchKrakenPrice(httpClientFor(config), config, parsePriceQuery('btc')));
    expect(refused.details).toMatchObject({ source: 'kraken', network_error: true });
  });
});
