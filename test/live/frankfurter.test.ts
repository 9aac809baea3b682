import { describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { FRANKFURTER_EUR_GBP } from '../fixtures/live/price.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('price (Frankfurter)', () => {
  const fx = useFakeUpstream({
    routes: {
      '/v1/latest': { json: FRANKFURTER_EUR_GBP },
    },
  });

  const source = (extra = {}) => createLiveDataSource(liveConfig({ frankfurter: fx.url }, extra));

  it('reads an ECB rate for a fiat pair', async () => {
    const result = await source().fetch('price', 'eur to gbp');
    expect(result).toEqual({
      source: 'frankfurter',
      asOf: '2026-11-20T00:00:00.000Z',
      refreshFloorS: 3600,
      data: {
        asset: { name: 'Euro', symbol: 'EUR', kind: 'fiat' },
        price: 0.8712,
        currency: 'GBP',
        as_of: '2026-11-20T00:00:00.000Z',
      },
    });
    expect(fx.requests).toHaveLength(1);
    expect(fx.requests[0]?.path).toBe('/v1/latest');
    expect(fx.requests[0]?.query).toEqual({ base: 'EUR', symbols: 'GBP' });
    expect(fx.requests[0]?.headers['user-agent']).toBe(USER_AGENT);
  });

  it('quotes USD in EUR by default', async () => {
    fx.route('/v1/latest', { json: { amount: 1, base: 'USD', date: '2026-11-20', rates: { EUR: 0.9521 } } });
    const result = await source().fetch('price', 'usd');
    expect(fx.requests[0]?.query).toEqual({ base: 'USD', symbols: 'EUR' });
    expect(result.data).toEqual({
      asset: { name: 'United States Dollar', symbol: 'USD', kind: 'fiat' },
      price: 0.9521,
      currency: 'EUR',
      as_of: '2026-11-20T00:00:00.000Z',
    });
  });

  it('is not_found on 404 and 422, and when the rate is missing', async () => {
    fx.route('/v1/latest', { status: 404, json: { message: 'not found' } });
    const err = await appErrorOf(source().fetch('price', 'eur/usd'));
    expect(err.code).toBe('not_found');
    expect(err.details).toEqual({ source: 'frankfurter' });
    fx.route('/v1/latest', { status: 422, json: { message: 'bad currency pair' } });
    expect((await appErrorOf(source().fetch('price', 'eur/usd'))).code).toBe('not_found');
    fx.route('/v1/latest', { json: { amount: 1, base: 'EUR', date: '2026-11-20', rates: {} } });
    expect((await appErrorOf(source().fetch('price', 'eur/usd'))).code).toBe('not_found');
  });

  it('fails on 500, 429, HTML and schema-invalid bodies, timeouts and refused connections', async () => {
    fx.route('/v1/latest', { status: 500, text: 'oops', contentType: 'text/plain' });
    expect((await appErrorOf(source().fetch('price', 'eur'))).code).toBe('upstream_failed');
    fx.route('/v1/latest', { status: 429, headers: { 'retry-after': '5' }, text: '' });
    expect((await appErrorOf(source().fetch('price', 'eur'))).details.retry_after_s).toBe(5);
    fx.route('/v1/latest', { text: '<html>Bad gateway</html>' });
    expect((await appErrorOf(source().fetch('price', 'eur'))).code).toBe('upstream_failed');
    fx.route('/v1/latest', { json: { base: 'EUR', rates: { USD: 1.05 } } });
    expect((await appErrorOf(source().fetch('price', 'eur'))).code).toBe('upstream_failed');
    fx.route('/v1/latest', { json: FRANKFURTER_EUR_GBP, delayMs: 1000 });
    expect((await appErrorOf(source({ timeoutMs: 200 }).fetch('price', 'eur'))).code).toBe(
      'upstream_timeout',
    );
    const refused = createLiveDataSource(liveConfig({ frankfurter: await closedPortUrl() }));
    expect((await appErrorOf(refused.fetch('price', 'eur'))).code).toBe('upstream_failed');
  });
});
