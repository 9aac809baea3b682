import { describe, expect, it } from 'vitest';
import { fetchGoldApiPrice } from '../../src/live/gold-api.js';
import { httpClientFor } from '../../src/live/live-data-source.js';
import { parsePriceQuery } from '../../src/live/price-query.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { GOLD_XAU } from '../fixtures/live/exchanges.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('price (gold-api.com)', () => {
  const gold = useFakeUpstream({
    routes: {
      '/price/XAU': { json: GOLD_XAU },
    },
  });

  const fetch = (query: string, deadline?: number) => {
    const config = liveConfig({ goldApi: `${gold.url}/v0/ignored` });
    return fetchGoldApiPrice(httpClientFor(config), config, parsePriceQuery(query), deadline);
  };

  it('reads the USD price per troy ounce and its updatedAt', async () => {
    expect(await fetch('gold price')).toEqual({
      source: 'gold-api',
      asOf: '2026-11-21T06:14:32.000Z',
      data: {
        asset: { name: 'Gold', symbol: 'XAU', kind: 'metal' },
        price: 2650.1,
        currency: 'USD',
        unit: 'troy_ounce',
        as_of: '2026-11-21T06:14:32.000Z',
      },
    });
    const [request] = gold.requests;
    expect(request?.rawUrl).toBe('/price/XAU');
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
  });

  it.each([
    ['silver', 'XAG', 'Silver'],
    ['xpt', 'XPT', 'Platinum'],
    ['palladium in usd', 'XPD', 'Palladium'],
  ])('asks for %s as /price/%s', async (query, symbol, name) => {
    gold.route(`/price/${symbol}`, { json: { ...GOLD_XAU, name, symbol, price: 31.2 } });
    const result = await fetch(query);
    expect(gold.requests[0]?.path).toBe(`/price/${symbol}`);
    expect(result.data).toMatchObject({ asset: { name, symbol, kind: 'metal' }, price: 31.2 });
  });

  it('is not_found for another quote currency, without a request', async () => {
    const err = await appErrorOf(fetch('price of silver in eur'));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      'Metal prices are served in USD only, not EUR; ask e.g. "silver" or "silver in usd".',
    );
    expect(gold.requests).toHaveLength(0);
  });

  it('is not_found for an asset that is no metal', async () => {
    const err = await appErrorOf(fetch('bitcoin'));
    expect(err.code).toBe('not_found');
    expect(err.message).toContain('gold, silver, platinum or palladium');
  });

  it('fails on an answer for another symbol, a zero price or a bad date', async () => {
    gold.route('/price/XAU', { json: { ...GOLD_XAU, symbol: 'XAG' } });
    expect((await appErrorOf(fetch('gold'))).message).toBe(
      'The price upstream (gold-api.com) answered for another metal; nothing was charged, try again later.',
    );
    for (const json of [{ ...GOLD_XAU, price: 0 }, { ...GOLD_XAU, updatedAt: 'soon' }, {}]) {
      gold.route('/price/XAU', { json });
      expect((await appErrorOf(fetch('gold'))).message).toContain('unexpected format');
    }
  });

  it('fails on 500, 429 with Retry-After, HTML with 200 and malformed JSON', async () => {
    gold.route('/price/XAU', { status: 500, json: { error: 'boom' } });
    expect((await appErrorOf(fetch('gold'))).details).toEqual({ source: 'gold-api', upstream_status: 500 });

    gold.route('/price/XAU', { status: 429, headers: { 'retry-after': '9' }, text: 'slow down' });
    const limited = await appErrorOf(fetch('gold'));
    expect(limited.code).toBe('upstream_failed');
    expect(limited.details.retry_after_s).toBe(9);

    gold.route('/price/XAU', { text: '<!doctype html><html><body>Bad gateway</body></html>' });
    expect((await appErrorOf(fetch('gold'))).message).toContain('not JSON');

    gold.route('/price/XAU', { text: '{"price": 26', contentType: 'application/json' });
    expect((await appErrorOf(fetch('gold'))).code).toBe('upstream_failed');
  });

  it('stops at the deadline and fails on a refused connection', async () => {
    gold.route('/price/XAU', { json: GOLD_XAU, delayMs: 1000 });
    const started = Date.now();
    expect((await appErrorOf(fetch('gold', Date.now() + 250))).code).toBe('upstream_timeout');
    expect(Date.now() - started).toBeLessThan(800);

    const config = liveConfig({ goldApi: await closedPortUrl() });
    const refused = await appErrorOf(
      fetchGoldApiPrice(httpClientFor(config), config, parsePriceQuery('gold')),
    );
    expect(refused.details).toMatchObject({ source: 'gold-api', network_error: true });
  });
});
