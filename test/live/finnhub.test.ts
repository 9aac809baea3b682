import { describe, expect, it } from 'vitest';
import { fetchFinnhubPrice, NO_FINNHUB_KEY } from '../../src/live/finnhub.js';
import type { LiveConfig } from '../../src/live/live-config.js';
import { httpClientFor } from '../../src/live/live-data-source.js';
import { parsePriceQuery } from '../../src/live/price-query.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { FINNHUB_AAPL, FINNHUB_UNKNOWN } from '../fixtures/live/exchanges.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

const QUOTE = '/api/v1/quote';
const KEY = 'fh-test-key';

describe('price (Finnhub)', () => {
  const finnhub = useFakeUpstream({
    routes: {
      [QUOTE]: { json: FINNHUB_AAPL },
    },
  });

  const fetch = (
    query: string,
    extra: Partial<LiveConfig> = { apiKeys: { finnhub: KEY } },
    deadline?: number,
  ) => {
    const config = liveConfig({ finnhub: finnhub.url }, extra);
    return fetchFinnhubPrice(httpClientFor(config), config, parsePriceQuery(query), deadline);
  };

  it('reads the quote in USD with its time and change since the previous close', async () => {
    expect(await fetch('aapl stock')).toEqual({
      source: 'finnhub',
      asOf: '2025-11-20T20:00:00.000Z',
      data: {
        asset: { name: 'AAPL', symbol: 'AAPL', kind: 'stock' },
        price: 261.74,
        currency: 'USD',
        as_of: '2025-11-20T20:00:00.000Z',
        change_24h_pct: 0.2221,
        previous_close: 261.16,
      },
    });
    const [request] = finnhub.requests;
    expect(request?.path).toBe(QUOTE);
    expect(request?.query).toEqual({ symbol: 'AAPL', token: KEY });
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
  });

  it('is not_found with the documented message and no request without a key', async () => {
    for (const extra of [{}, { apiKeys: { finnhub: '' } }]) {
      const err = await appErrorOf(fetch('$aapl', extra));
      expect(err.code).toBe('not_found');
      expect(err.message).toBe(
        'Stock prices need a Finnhub key: the operator sets AC_FINNHUB_API_KEY; without it stock queries are not served.',
      );
      expect(err.message).toBe(NO_FINNHUB_KEY);
    }
    expect(finnhub.requests).toHaveLength(0);
  });

  it('is not_found when c is 0 (unknown ticker)', async () => {
    finnhub.route(QUOTE, { json: FINNHUB_UNKNOWN });
    const err = await appErrorOf(fetch('stock zzzz'));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      'No stock with the ticker "ZZZZ" was found; use a US ticker such as "aapl stock" or "$msft".',
    );
    expect(finnhub.requests[0]?.query.symbol).toBe('ZZZZ');
  });

  it('is not_found for a quote currency other than USD, without a request', async () => {
    const err = await appErrorOf(fetch('aapl shares in eur'));
    expect(err.code).toBe('not_found');
    expect(err.message).toContain('USD only, not EUR');
    expect(finnhub.requests).toHaveLength(0);
  });

  it('says the key was rejected on 401 and maps 403 (not on this plan) to not_found', async () => {
    finnhub.route(QUOTE, { status: 401, json: { error: 'Invalid API key' } });
    const rejected = await appErrorOf(fetch('aapl stock'));
    expect(rejected.code).toBe('upstream_failed');
    expect(rejected.message).toContain('rejected the configured key (HTTP 401)');
    expect(rejected.message).not.toContain(KEY);
    finnhub.route(QUOTE, { status: 403, json: { error: "You don't have access to this resource." } });
    expect((await appErrorOf(fetch('bmw.de stock'))).code).toBe('not_found');
    expect(finnhub.requests).toHaveLength(2);
  });

  it('fails on 500, 429 with Retry-After, HTML with 200, malformed and schema-invalid JSON', async () => {
    finnhub.route(QUOTE, { status: 500, json: { error: 'boom' } });
    expect((await appErrorOf(fetch('aapl stock'))).details).toEqual({
      source: 'finnhub',
      upstream_status: 500,
    });

    finnhub.route(QUOTE, {
      status: 429,
      headers: { 'retry-after': '60' },
      json: { error: 'API limit reached' },
    });
    const limited = await appErrorOf(fetch('aapl stock'));
    expect(limited.details).toEqual({ source: 'finnhub', upstream_status: 429, retry_after_s: 60 });
    expect(limited.message).not.toContain(KEY);

    finnhub.route(QUOTE, { text: '<html><body>Maintenance</body></html>' });
    expect((await appErrorOf(fetch('aapl stock'))).message).toContain('not JSON');

    finnhub.route(QUOTE, { text: '{"c": 261.', contentType: 'application/json' });
    expect((await appErrorOf(fetch('aapl stock'))).code).toBe('upstream_failed');

    for (const json of [{}, { c: '261.74' }, { error: 'Symbol not supported' }]) {
      finnhub.route(QUOTE, { json });
      expect((await appErrorOf(fetch('aapl stock'))).message).toContain('unexpected format');
    }
  });

  it('gives as_of null when t is 0', async () => {
    finnhub.route(QUOTE, { json: { ...FINNHUB_AAPL, t: 0, dp: null } });
    const result = await fetch('aapl stock');
    expect(result.asOf).toBeUndefined();
    expect(result.data).toMatchObject({ price: 261.74, as_of: null, change_24h_pct: null });
  });

  it('stops at the deadline and fails on a refused connection', async () => {
    finnhub.route(QUOTE, { json: FINNHUB_AAPL, delayMs: 1000 });
    const started = Date.now();
    const slow = await appErrorOf(fetch('aapl stock', { apiKeys: { finnhub: KEY } }, Date.now() + 250));
    expect(slow.code).toBe('upstream_timeout');
    expect(Date.now() - started).toBeLessThan(800);

    const config = liveConfig({ finnhub: await closedPortUrl() }, { apiKeys: { finnhub: KEY } });
    const refused = await appErrorOf(
      fetchFinnhubPrice(httpClientFor(config), config, parsePriceQuery('$aapl')),
    );
    expect(refused.details).toMatchObject({ source: 'finnhub', network_error: true });
  });
});
