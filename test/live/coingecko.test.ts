import { describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { SEARCH_BTC, SIMPLE_PRICE } from '../fixtures/live/price.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('price (CoinGecko)', () => {
  const gecko = useFakeUpstream({
    routes: {
      '/api/v3/search': { json: SEARCH_BTC },
      '/api/v3/simple/price': { json: SIMPLE_PRICE },
    },
  });

  const source = (extra = {}) => createLiveDataSource(liveConfig({ coingecko: gecko.url }, extra));

  it('resolves the symbol and reads the price in the asked currency', async () => {
    const result = await source().fetch('price', 'btc in eur');
    expect(result).toEqual({
      source: 'coingecko',
      asOf: '2025-11-21T04:40:00.000Z',
      data: {
        asset: { name: 'Bitcoin', symbol: 'BTC', kind: 'crypto', id: 'bitcoin' },
        price: 57123.45,
        currency: 'EUR',
        as_of: '2025-11-21T04:40:00.000Z',
        change_24h_pct: -1.25,
      },
    });
    const [search, price] = gecko.requests;
    expect(search?.path).toBe('/api/v3/search');
    expect(search?.query).toEqual({ query: 'btc' });
    expect(price?.path).toBe('/api/v3/simple/price');
    expect(price?.query).toEqual({
      ids: 'bitcoin',
      vs_currencies: 'eur',
      include_last_updated_at: 'true',
      include_24hr_change: 'true',
    });
    for (const request of gecko.requests) {
      expect(request.headers['user-agent']).toBe(USER_AGENT);
      expect(request.headers.accept).toBe('application/json');
      expect(request.headers['x-cg-demo-api-key']).toBeUndefined();
    }
  });

  it('sends the demo key as a header when configured, never in the URL', async () => {
    gecko.route('/api/v3/simple/price', { json: { bitcoin: { usd: 64000.5 } } });
    await source({ apiKeys: { coingecko: 'CG-demo-123' } }).fetch('price', 'bitcoin');
    expect(gecko.requests.map((r) => r.headers['x-cg-demo-api-key'])).toEqual(['CG-demo-123', 'CG-demo-123']);
    expect(gecko.requests.map((r) => r.rawUrl).join(' ')).not.toContain('CG-demo-123');
    expect(gecko.requests[1]?.query.vs_currencies).toBe('usd');
  });

  it('gives as_of null when CoinGecko has no last_updated_at', async () => {
    gecko.route('/api/v3/simple/price', { json: { bitcoin: { usd: 64000.5 } } });
    const result = await source().fetch('price', 'bitcoin');
    expect(result.asOf).toBeUndefined();
    expect(result.data).toMatchObject({ price: 64000.5, currency: 'USD', as_of: null });
  });

  it('is not_found when the search finds no coins', async () => {
    gecko.route('/api/v3/search', { json: { coins: [], exchanges: [], icos: [], categories: [], nfts: [] } });
    const err = await appErrorOf(source().fetch('price', 'notacoin'));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      'No asset called "notacoin" was found; use a coin name like "bitcoin", a symbol like "btc", or an ISO currency code like "eur".',
    );
    expect(gecko.requests).toHaveLength(1);
  });

  it('treats an empty {} or a missing currency as a soft failure', async () => {
    gecko.route('/api/v3/simple/price', { json: {} });
    const err = await appErrorOf(source().fetch('price', 'btc'));
    expect(err.code).toBe('upstream_failed');
    expect(err.details).toEqual({ source: 'coingecko' });
    expect(err.message).toContain('CoinGecko');
    gecko.route('/api/v3/simple/price', { json: { bitcoin: { usd: 64000, last_updated_at: 1763700000 } } });
    expect((await appErrorOf(source().fetch('price', 'btc in eur'))).code).toBe('upstream_failed');
  });

  it('fails on 500, 429 with Retry-After, HTML and schema-invalid bodies', async () => {
    gecko.route('/api/v3/search', { status: 500, json: { error: 'boom' } });
    expect((await appErrorOf(source().fetch('price', 'btc'))).details).toEqual({
      source: 'coingecko',
      upstream_status: 500,
    });

    gecko.route('/api/v3/simple/price', {
      status: 429,
      headers: { 'retry-after': '60' },
      json: { status: { error_code: 429, error_message: "You've exceeded the Rate Limit." } },
    });
    gecko.route('/api/v3/search', { json: SEARCH_BTC });
    const limited = await appErrorOf(source().fetch('price', 'btc'));
    expect(limited.code).toBe('upstream_failed');
    expect(limited.details.retry_after_s).toBe(60);
    expect(limited.message).toBe(
      'The price upstream (CoinGecko) is rate-limiting this service (HTTP 429); nothing was charged, try again in 60 s.',
    );

    gecko.route('/api/v3/search', { text: '<html><title>Just a moment...</title></html>' });
    expect((await appErrorOf(source().fetch('price', 'btc'))).code).toBe('upstream_failed');

    gecko.route('/api/v3/search', { json: { coins: 'bitcoin' } });
    const invalid = await appErrorOf(source().fetch('price', 'btc'));
    expect(invalid.code).toBe('upstream_failed');
    expect(invalid.message).toContain('unexpected format');

    gecko.route('/api/v3/search', { json: SEARCH_BTC });
    gecko.route('/api/v3/simple/price', { json: { bitcoin: { usd: 'a lot' } } });
    expect((await appErrorOf(source().fetch('price', 'btc'))).code).toBe('upstream_failed');
  });

  it('times out and fails on a refused connection', async () => {
    gecko.route('/api/v3/search', { json: SEARCH_BTC, delayMs: 1000 });
    const slow = await appErrorOf(source({ timeoutMs: 200 }).fetch('price', 'btc'));
    expect(slow.code).toBe('upstream_timeout');
    expect(slow.message).toContain('The price upstream (CoinGecko) did not answer within 0.2 s');

    const refused = createLiveDataSource(liveConfig({ coingecko: await closedPortUrl() }));
    expect((await appErrorOf(refused.fetch('price', 'btc'))).code).toBe('upstream_failed');
  });
});
