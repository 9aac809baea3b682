/** POST /api/ac/data end to end: the real providers, configured by environment, against a fake upstream. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, type FakeUpstream, startFakeUpstream } from '../fakes/fake-upstream.js';
import { FORECAST_PARIS, GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

describe('live data through the real providers', () => {
  const clock = new ManualClock();
  let upstream: FakeUpstream;
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream({
      '/v1/search': (req) =>
        req.query.name === 'paris' ? { json: GEOCODING_PARIS } : { json: { generationtime_ms: 1 } },
      '/v1/forecast': { json: FORECAST_PARIS },
      '/api/v1/search_by_date': { json: { hits: [] }, delayMs: 1500 },
    });
    server = await startTestServer({
      clock,
      env: {
        AC_OPEN_METEO_GEOCODING_URL: upstream.url,
        AC_OPEN_METEO_FORECAST_URL: `${upstream.url}/ignored/path`,
        AC_HN_ALGOLIA_URL: upstream.url,
        AC_COINGECKO_URL: await closedPortUrl(),
        AC_UPSTREAM_TIMEOUT_MS: '300',
        AC_WEATHER_PROVIDERS: 'open-meteo',
        AC_NEWS_PROVIDERS: 'hn-algolia',
        AC_PRICE_PROVIDERS: 'coingecko',
      },
    });
    key = await server.register();
  });
  afterAll(async () => {
    await server.close();
    await upstream.close();
  });

  const data = (body: Record<string, unknown>) =>
    server.request('POST', '/api/ac/data', { key, body: { agent_key: key, ...body } });

  it('answers weather with normalised data, calling the documented paths with a descriptive User-Agent', async () => {
    const res = await data({ query_type: 'weather', query: 'Paris' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      from_cache: false,
      cost_cents: 2,
      credit_balance_cents: 48,
      source: 'open-meteo',
    });
    expect(res.body.data.location).toMatchObject({
      name: 'Paris',
      country: 'France',
      latitude: 48.85341,
      longitude: 2.3488,
    });
    expect(typeof res.body.data.temperature_c).toBe('number');
    expect(typeof res.body.data.condition).toBe('string');
    expect(res.body.data.observed_at).toMatch(/Z$/);
    expect(res.body.as_of).toBe(res.body.data.observed_at);
    const paths = upstream.requests.map((r) => r.path);
    expect(paths).toEqual(['/v1/search', '/v1/forecast']);
    for (const r of upstream.requests) expect(r.headers['user-agent']).toMatch(/^agent-context\/1\.0/);
  });

  it('a burst of identical requests makes one upstream call and one charge', async () => {
    upstream.route('/v1/search', (req) =>
      ['lyon', 'paris'].includes(req.query.name ?? '')
        ? { json: GEOCODING_PARIS, delayMs: req.query.name === 'lyon' ? 150 : 0 }
        : { json: { generationtime_ms: 1 } },
    );
    const agents = await Promise.all(Array.from({ length: 5 }, () => server.register()));
    const before = upstream.requests.length;
    const results = await Promise.all(
      agents.flatMap((k) =>
        [1, 2].map(() =>
          server.request('POST', '/api/ac/data', {
            key: k,
            body: { agent_key: k, query_type: 'weather', query: 'Lyon' },
          }),
        ),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(upstream.requests.length - before).toBe(2); // one geocoding call, one forecast call
    expect(results.filter((r) => r.body.cost_cents === 2)).toHaveLength(1);
    const spent = await Promise.all(
      agents.map(
        async (k) =>
          50 - (await server.request('GET', '/api/ac/account', { key: k })).body.credit_balance_cents,
      ),
    );
    expect(spent.reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('a dead chain with an old cache entry answers stale, free', async () => {
    const k = await server.register();
    const fresh = await server.request('POST', '/api/ac/data', {
      key: k,
      body: { agent_key: k, query_type: 'weather', query: 'Paris', cache_minutes: 0 },
    });
    expect(fresh.status).toBe(200);
    upstream.route('/v1/forecast', { status: 503 });
    clock.advance(30 * 60_000);
    const res = await server.request('POST', '/api/ac/data', {
      key: k,
      body: { agent_key: k, query_type: 'weather', query: 'paris' },
    });
    upstream.route('/v1/forecast', { json: FORECAST_PARIS });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      from_cache: true,
      stale: true,
      cost_cents: 0,
      credit_balance_cents: 48,
      source: 'open-meteo',
    });
    expect(res.body.cache_age_s).toBe(1800);
  });

  it('an unknown city is a free 404', async () => {
    const res = await data({ query_type: 'weather', query: 'Atlantis' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
    expect(res.body.error).toMatch(/Atlantis|atlantis/);
    expect((await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents).toBe(48);
  });

  it('an upstream slower than the timeout is a free 504', async () => {
    const res = await data({ query_type: 'news', query: 'slow' });
    expect(res.status).toBe(504);
    expect(res.body.code).toBe('upstream_timeout');
    expect((await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents).toBe(48);
  });

  it('an unreachable upstream is a free 502', async () => {
    const res = await data({ query_type: 'price', query: 'bitcoin' });
    expect(res.status).toBe(502);
    expect(res.body.code).toBe('upstream_failed');
    expect((await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents).toBe(48);
  });
});
