import { describe, expect, it } from 'vitest';
import { fetchCoinbasePrice } from '../../src/live/coinbase.js';
import { httpClientFor } from '../../src/live/live-data-source.js';
import { parsePriceQuery } from '../../src/live/price-query.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { COINBASE_BAD_REQUEST, COINBASE_BTC_EUR, COINBASE_NOT_FOUND } from '../fixtures/live/exchanges.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('price (Coinbase)', () => {
  const coinbase = useFakeUpstream({
    routes: {
      '/v2/prices/BTC-EUR/spot': { json: COINBASE_BTC_EUR },
    },
  });

  const fetch = (query: string, deadline?: number) => {
    const config = liveConfig({ coinbase: `${coinbase.url}/ignored` });
    return fetchCoinbasePrice(httpClientFor(config), config, parsePriceQuery(query), deadline);
  };

  it('reads the spot amount string as a number, with as_of null', async () => {
    expect(await fetch('bitcoin in eur')).toEqual({
      source: 'coinbase',
      data: {
        asset: { name: 'Bitcoin', symbol: 'BTC', kind: 'crypto' },
        price: 57123.455,
        currency: 'EUR',
        as_of: null,
      },
    });
    const [request] = coinbase.requests;
    expect(request?.rawUrl).toBe('/v2/prices/BTC-EUR/spot');
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
    expect(request?.headers.accept).toBe('application/json');
  });

  it.each([
    ['btc eur', 'BTC-EUR'],
    ['ethereum', 'ETH-USD'],
    ['ripple in gbp', 'XRP-GBP'],
    ['usd coin in eur', 'USDC-EUR'],
    ['tether', 'USDT-USD'],
    ['pepe', 'PEPE-USD'],
  ])('maps "%s" to the pair %s', async (query, pair) => {
    coinbase.route(`/v2/prices/${pair}/spot`, {
      json: { data: { amount: '1.5', base: pair.split('-')[0], currency: pair.split('-')[1] } },
    });
    const result = await fetch(query);
    expect(coinbase.requests[0]?.path).toBe(`/v2/prices/${pair}/spot`);
    expect(result.data).toMatchObject({ price: 1.5, currency: pair.split('-')[1] });
  });

  it('is not_found without a request when the asset is no symbol and no known coin', async () => {
    const err = await appErrorOf(fetch('shiba inu token'));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      'Coinbase has no USD price for "shiba inu token"; use a coin symbol like "btc" or a name like "bitcoin".',
    );
    expect(coinbase.requests).toHaveLength(0);
  });

  it('is not_found on the documented 404 and 400, without retrying', async () => {
    coinbase.route('/v2/prices/NOPE-USD/spot', { status: 404, json: COINBASE_NOT_FOUND });
    const missing = await appErrorOf(fetch('nope'));
    expect(missing.code).toBe('not_found');
    expect(missing.details).toEqual({ source: 'coinbase' });
    coinbase.route('/v2/prices/NOPE-USD/spot', { status: 400, json: COINBASE_BAD_REQUEST });
    expect((await appErrorOf(fetch('nope'))).code).toBe('not_found');
    expect(coinbase.requests).toHaveLength(2);
  });

  it('fails on 500, 429 with Retry-After, HTML with 200, malformed and schema-invalid JSON', async () => {
    const path = '/v2/prices/BTC-EUR/spot';
    coinbase.route(path, { status: 500, json: { errors: [{ id: 'internal_server_error' }] } });
    const failed = await appErrorOf(fetch('btc in eur'));
    expect(failed.code).toBe('upstream_failed');
    expect(failed.details).toEqual({ source: 'coinbase', upstream_status: 500 });
    expect(coinbase.requests).toHaveLength(3);

    coinbase.route(path, { status: 429, headers: { 'retry-after': '20' }, json: { errors: [] } });
    const limited = await appErrorOf(fetch('btc in eur'));
    expect(limited.message).toBe(
      'The price upstream (Coinbase) is rate-limiting this service (HTTP 429); nothing was charged, try again in 20 s.',
    );
    expect(limited.details.retry_after_s).toBe(20);

    coinbase.route(path, { text: '<html><title>Just a moment...</title></html>' });
    expect((await appErrorOf(fetch('btc in eur'))).message).toContain('not JSON');

    coinbase.route(path, { text: '{"data":{"amount":', contentType: 'application/json' });
    expect((await appErrorOf(fetch('btc in eur'))).code).toBe('upstream_failed');

    for (const json of [
      {},
      { data: { amount: 57000, base: 'BTC', currency: 'EUR' } },
      { data: { amount: 'n/a' } },
    ]) {
      coinbase.route(path, { json });
      const invalid = await appErrorOf(fetch('btc in eur'));
      expect(invalid.code).toBe('upstream_failed');
      expect(invalid.message).toContain('unexpected format');
    }
  });

  it('stops at the deadline and fails on a refused connection', async () => {
    coinbase.route('/v2/prices/BTC-EUR/spot', { json: COINBASE_BTC_EUR, delayMs: 1000 });
    const started = Date.now();
    expect((await appErrorOf(fetch('btc in eur', Date.now() + 250))).code).toBe('upstream_timeout');
    expect(Date.now() - started).toBeLessThan(800);

    const config = liveConfig({ coinbase: await closedPortUrl() });
    const refused = await appErrorOf(
      fetchCoinbasePrice(httpClientFor(config), config, parsePriceQuery('btc')),
    );
    expect(refused.details).toMatchObject({ source: 'coinbase', network_error: true });
  });
});
