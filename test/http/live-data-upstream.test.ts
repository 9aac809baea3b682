/** POST /api/ac/data end to end: the real providers, configured by environment, against a fake upstream. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { closedPortUrl, type FakeUpstream, startFakeUpstream } from '../fakes/fake-upstream.js';
import { GDELT_PATH } from '../fixtures/live/gdelt.js';
import { GOOGLE_NEWS_EMPTY, GOOGLE_NEWS_PATH, GOOGLE_NEWS_RUST } from '../fixtures/live/google-news.js';
import { FORECAST_PARIS, GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { WTTR_PARIS } from '../fixtures/live/wttr.js';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';
import { liveConfig } from '../live/helpers.js';

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

/**
 * Issue 14 end to end, real providers against a fake upstream: waiting for a provider's token instead of
 * failing, saying when there is capacity when the wait does not fit, and coverage fail-over on empty news.
 * The chain's clock runs ahead of real time by what it "slept": the waits move it, nothing really sleeps.
 */
describe('live data: waiting for capacity and coverage fail-over', () => {
  const chainClock = { offsetMs: 0, slept: [] as number[] };
  const now = () => Date.now() + chainClock.offsetMs;
  const sleep = async (ms: number) => {
    chainClock.slept.push(ms);
    chainClock.offsetMs += ms;
  };
  const CITIES = ['paris', 'berlin', 'lyon', 'rome', 'madrid', 'oslo'];
  let upstream: FakeUpstream;
  let server: TestServer;
  let tight: TestServer;

  beforeAll(async () => {
    upstream = await startFakeUpstream({
      '/v1/search': { status: 500 },
      ...Object.fromEntries(CITIES.map((city) => [`/${city}`, { json: WTTR_PARIS }])),
      '/api/v1/search_by_date': { json: { hits: [] } },
      [GOOGLE_NEWS_PATH]: { text: GOOGLE_NEWS_RUST, contentType: 'application/rss+xml; charset=utf-8' },
      [GDELT_PATH]: { json: {} },
    });
    const live = (budgetMs?: number) =>
      createLiveDataSource(
        liveConfig(
          {
            openMeteoGeocoding: upstream.url,
            openMeteoForecast: upstream.url,
            wttr: upstream.url,
            hnAlgolia: upstream.url,
            googleNews: upstream.url,
            gdelt: upstream.url,
          },
          { providers: { weather: ['open-meteo', 'wttr'], news: ['hn-algolia', 'google-news', 'gdelt'] } },
        ),
        { now, sleep, ...(budgetMs === undefined ? {} : { budgetMs }) },
      );
    server = await startTestServer({ live: live() });
    // The same chains with a 2 s budget: wttr.in's next token (3 s apart) never fits.
    tight = await startTestServer({ live: live(2_000) });
  });
  afterAll(async () => {
    await server.close();
    await tight.close();
    await upstream.close();
  });

  const ask = (key: string, body: Record<string, unknown>, on = server) =>
    on.request('POST', '/api/ac/data', { key, body: { agent_key: key, cache_minutes: 0, ...body } });

  it('Open-Meteo down, five cities in a row: wttr.in answers all five, the fifth after a wait for its token', async () => {
    const key = await server.register();
    const results = [];
    for (const city of CITIES.slice(0, 5))
      results.push(await ask(key, { query_type: 'weather', query: city }));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(results.map((r) => r.body.source)).toEqual(Array(5).fill('wttr'));
    expect(results[0]?.body.providers_asked).toEqual(['open-meteo', 'wttr']);
    // wttr.in: 20 a minute, a burst of 4; the fifth waited (up to 3 s) for the next token.
    expect(chainClock.slept).toHaveLength(1);
    expect(chainClock.slept[0]).toBeGreaterThan(2000);
    expect(chainClock.slept[0]).toBeLessThanOrEqual(3000);
  });

  it('a wait that does not fit the budget is a free 502 with retry_after_s and Retry-After', async () => {
    const key = await tight.register();
    const slept = chainClock.slept.length;
    for (const city of CITIES.slice(0, 4)) {
      expect((await ask(key, { query_type: 'weather', query: city }, tight)).status).toBe(200);
    }
    const res = await ask(key, { query_type: 'weather', query: 'oslo' }, tight);
    expect(chainClock.slept.length).toBe(slept); // it did not wait
    expect(res.status, res.text).toBe(502);
    expect(res.body.code).toBe('upstream_failed');
    expect(res.body.retry_after_s).toBe(3);
    expect(res.headers.get('retry-after')).toBe(String(res.body.retry_after_s));
    expect(res.body.error).toMatch(/capacity again in \d+ s/);
    expect((await tight.request('GET', '/api/ac/account', { key })).body.credit_balance_cents).toBe(42);
  });

  it('HN Algolia has no hits for "graphql": the stories come from Google News, naming both providers', async () => {
    const key = await server.register();
    const res = await ask(key, { query_type: 'news', query: 'graphql' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.source).toBe('google-news');
    expect(res.body.providers_asked).toEqual(['hn-algolia', 'google-news']);
    expect(res.body.data.items.length).toBeGreaterThan(0);
    expect(res.body.cost_cents).toBe(2);
  });

  it('every news provider empty: an empty list, naming all three, charged as an answer', async () => {
    const key = await server.register();
    upstream.route(GOOGLE_NEWS_PATH, {
      text: GOOGLE_NEWS_EMPTY,
      contentType: 'application/rss+xml; charset=utf-8',
    });
    const res = await ask(key, { query_type: 'news', query: 'qwzx' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.items).toEqual([]);
    expect(res.body.providers_asked).toEqual(['hn-algolia', 'google-news', 'gdelt']);
    expect(res.body).toMatchObject({ cost_cents: 2, credit_balance_cents: 48, from_cache: false });
  });
});
