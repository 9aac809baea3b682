/** POST /api/ac/data end to end: the real providers, configured by environment, against a fake upstream. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { closedPortUrl, type FakeUpstream, startFakeUpstream } from '../fakes/fake-upstream.js';
import { GDELT_PATH } from '../fixtures/live/gdelt.js';
import { GOOGLE_NEWS_EMPTY, GOOGLE_NEWS_PATH, GOOGLE_NEWS_RUST } from '../fixtures/live/google-news.js';
import { MET_NORWAY_PARIS, MET_NORWAY_PATH } from '../fixtures/live/met-norway.js';
import { NOMINATIM_PARIS, NOMINATIM_PATH } from '../fixtures/live/nominatim.js';
import { FORECAST_PARIS, GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { WTTR_PARIS } from '../fixtures/live/wttr.js';
import { type ApiResponse, ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';
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
          {
            providers: {
              weather: ['open-meteo', 'wttr'],
              // Open-Meteo's geocoder only: no Nominatim token to wait for besides wttr.in's.
              geocoding: ['open-meteo'],
              news: ['hn-algolia', 'google-news', 'gdelt'],
            },
          },
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

/**
 * Virtual time for a burst: the chains' clock stands still except when the test moves it, so the buckets'
 * refills do not depend on how fast the machine is. Requests are launched at set virtual times; a chain's
 * wait for a token is queued; whenever no request is doing anything but waiting, the clock jumps to the
 * earliest queued moment (ties in the order queued) and that one goes on. Nothing really sleeps.
 */
class VirtualTime {
  private readonly base = Date.now();
  private offsetMs = 0;
  private seq = 0;
  private inFlight = 0;
  private sleepers = 0;
  private readonly queue: { at: number; seq: number; chainSleep: boolean; go: () => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** Every wait a chain asked for, in ms. */
  readonly slept: number[] = [];

  now = () => this.base + this.offsetMs;
  sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      this.slept.push(ms);
      this.sleepers++;
      this.enqueue(this.offsetMs + ms, true, resolve);
    });

  /** Sends `send()` at virtual time `atMs`; resolves with its answer and the virtual times it was sent and answered. */
  at<T>(atMs: number, send: () => Promise<T>): Promise<{ value: T; sentMs: number; doneMs: number }> {
    return new Promise((resolve, reject) => {
      this.enqueue(atMs, false, () => {
        this.inFlight++;
        const sentMs = this.offsetMs;
        send().then(
          (value) => {
            this.inFlight--;
            resolve({ value, sentMs, doneMs: this.offsetMs });
          },
          (error: unknown) => {
            this.inFlight--;
            reject(error);
          },
        );
      });
    });
  }

  private enqueue(at: number, chainSleep: boolean, go: () => void) {
    this.queue.push({ at, seq: this.seq++, chainSleep, go });
    this.queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.poll();
  }

  private poll() {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      // Someone is still working (an HTTP call, a charge): let it finish or queue its wait first.
      if (this.inFlight > this.sleepers) return this.poll();
      const next = this.queue.shift();
      if (!next) return;
      if (next.chainSleep) this.sleepers--;
      this.offsetMs = Math.max(this.offsetMs, next.at);
      next.go();
      if (this.queue.length > 0) this.poll();
    }, 2);
  }
}

/**
 * Issue 14's burst: 20 distinct cities within 5 s with Open-Meteo's forecast dead, each from its own agent,
 * against the default weather chain (open-meteo → met-norway → wttr) with its default buckets and breakers:
 * Open-Meteo 300/min (burst 50), MET Norway 60/min (burst 10), wttr.in 20/min (burst 4); breakers open after
 * 5 consecutive failures for 60 s; the budget is 15 s a request. One request every 240 ms (the last at 4.56 s).
 */
describe('live data: a burst of 20 cities with Open-Meteo down', () => {
  const CITIES = [
    'paris',
    'berlin',
    'lyon',
    'rome',
    'madrid',
    'oslo',
    'vienna',
    'prague',
    'warsaw',
    'lisbon',
    'dublin',
    'athens',
    'helsinki',
    'stockholm',
    'copenhagen',
    'brussels',
    'amsterdam',
    'zurich',
    'budapest',
    'sofia',
  ];
  const SPACING_MS = 240;
  const BUDGET_MS = 15_000;
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await startFakeUpstream({
      '/v1/forecast': { status: 500 },
      [MET_NORWAY_PATH]: { json: MET_NORWAY_PARIS },
      [NOMINATIM_PATH]: (req) => ({
        json: NOMINATIM_PARIS.map((place) => ({ ...place, name: req.query.q })),
      }),
      ...Object.fromEntries(CITIES.map((city) => [`/${city}`, { json: WTTR_PARIS }])),
    });
  });
  afterAll(async () => {
    await upstream.close();
  });

  /** A fresh server with fresh chains (buckets full, breakers closed); the 20 answers in city order. */
  async function burst() {
    const time = new VirtualTime();
    const server = await startTestServer({
      live: createLiveDataSource(
        liveConfig(
          {
            openMeteoGeocoding: upstream.url,
            openMeteoForecast: upstream.url,
            metNorway: upstream.url,
            nominatim: upstream.url,
            wttr: upstream.url,
          },
          {
            providers: {
              weather: ['open-meteo', 'met-norway', 'wttr'],
              geocoding: ['open-meteo', 'nominatim'],
            },
          },
        ),
        { now: time.now, sleep: time.sleep },
      ),
    });
    try {
      const keys = await Promise.all(CITIES.map(() => server.register()));
      upstream.requests.length = 0;
      const answers = await Promise.all(
        CITIES.map((city, i) =>
          time.at(i * SPACING_MS, () =>
            server.request('POST', '/api/ac/data', {
              key: keys[i],
              body: { agent_key: keys[i], query_type: 'weather', query: city },
            }),
          ),
        ),
      );
      const balances = await Promise.all(
        keys.map(
          async (key) =>
            (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number,
        ),
      );
      const calls = (path: string) => upstream.requests.filter((r) => r.path === path).length;
      return {
        time,
        answers,
        res: answers.map((a) => a.value as ApiResponse),
        balances,
        spent: balances.reduce((sum, balance) => sum + (50 - balance), 0),
        calls,
      };
    } finally {
      await server.close();
    }
  }

  it('geocoder up: all 20 answer 200, from MET Norway and wttr.in, within the budget, 2 cents each', async () => {
    upstream.route('/v1/search', (req) => ({
      json: {
        results: GEOCODING_PARIS.results.map((place) => ({ ...place, name: req.query.name ?? place.name })),
      },
    }));
    const { time, answers, res, spent, calls } = await burst();
    expect(
      res.map((r) => r.status),
      JSON.stringify(res.map((r) => r.body)),
    ).toEqual(Array(20).fill(200));
    // Requests 1-5 find Open-Meteo failing (3 attempts each); its breaker then opens for 60 s. MET Norway's
    // bucket (10, +1/s) holds 10 + 0.24·k minus the tokens taken before request k+1 (at 0.24·k s): requests
    // 1-12 take one; 13 (2.88 s) finds 0.88 and goes to wttr.in, whose bucket is full (4, capped; +1 per 3 s);
    // 14 (3.12 s) finds 1.12 at MET; 15-17 find 0.36-0.84 and go to wttr.in (4 → 0.32 at 3.84 s); 18 (4.08 s)
    // finds 1.08 at MET. 19 (4.32 s): MET 0.32, wttr.in 0.48, so it waits 680 ms for MET's next token (5.0 s).
    // 20 (4.56 s): MET 0.56, wttr.in 0.56, waits 440 ms; at 5.0 s 19, queued first, takes MET's token, and 20
    // waits 880 ms more for wttr.in's (0.32 + 1.16 s / 3 s = 0.71 at 5.0 s), answering at 5.88 s.
    const met = 'met-norway';
    const wttr = 'wttr';
    expect(res.map((r) => r.body.source)).toEqual([
      ...Array(12).fill(met),
      wttr,
      met,
      wttr,
      wttr,
      wttr,
      met,
      met,
      wttr,
    ]);
    expect(res.slice(0, 5).map((r) => r.body.providers_asked)).toEqual(Array(5).fill(['open-meteo', met]));
    expect(res[12]?.body.providers_asked).toBeUndefined(); // only wttr.in was asked: `source` says it
    expect(time.slept).toEqual([680, 440, 880]);
    expect(answers.map((a) => a.doneMs - a.sentMs)).toEqual([...Array(18).fill(0), 680, 1_320]);
    for (const { sentMs, doneMs } of answers) expect(doneMs - sentMs).toBeLessThanOrEqual(BUDGET_MS);
    // The breaker let exactly 5 requests through, 3 attempts each, and nothing after.
    expect(calls('/v1/forecast')).toBe(15);
    // One geocoding per request that needed coordinates (issue 33): requests 1-5 asked it once for both
    // Open-Meteo and MET Norway, the other 10 MET Norway answered once each; wttr.in's 5 needed none.
    expect(calls('/v1/search')).toBe(15);
    expect(calls(MET_NORWAY_PATH)).toBe(15);
    expect(spent).toBe(2 * 20);
    for (const r of res) expect(r.body.cost_cents).toBe(2);
  });
  it('Open-Meteo dead, geocoder too: all 20 answer 200 within the budget, MET Norway finding places with Nominatim', async () => {
    upstream.route('/v1/search', { status: 500 });
    const { time, answers, res, balances, spent, calls } = await burst();
    // Open-Meteo's forecast and MET Norway both ask the geocoding chain, once per request (issue 33):
    // Open-Meteo's geocoder fails (3 attempts; its breaker opens after 5 requests), Nominatim answers, one
    // call every 1.2 s and never two at once. A request that finds Nominatim without a token skips both
    // (not blamed) and goes to wttr.in (burst 4, then a token every 3 s) or, with wttr.in empty too, waits
    // for whichever has a token first: the geocoding chain then goes on from where it stopped (Nominatim),
    // without asking Open-Meteo's geocoder again. Where Nominatim gave a place, Open-Meteo's forecast (dead)
    // is asked first, 3 attempts, until its breaker opens after 5 such requests; MET Norway then answers
    // with the same place, without geocoding again.
    const met = 'met-norway';
    const wttr = 'wttr';
    expect(
      res.map((r) => r.status),
      JSON.stringify(res.map((r) => r.body)),
    ).toEqual(Array(20).fill(200));
    expect(res.map((r) => r.body.source)).toEqual([
      met,
      ...Array(4).fill(wttr),
      met,
      wttr,
      met,
      met,
      wttr,
      met,
      met,
      met,
      wttr,
      ...Array(4).fill(met),
      wttr,
      met,
    ]);
    expect(answers.map((a) => a.doneMs - a.sentMs)).toEqual([
      0, 0, 0, 0, 0, 0, 1_800, 3_120, 4_080, 4_080, 0, 4_560, 5_520, 6_120, 6_240, 0, 6_960, 7_920, 7_920,
      8_640,
    ]);
    for (const { sentMs, doneMs } of answers) expect(doneMs - sentMs).toBeLessThanOrEqual(BUDGET_MS);
    expect(time.slept.length).toBeGreaterThan(0);
    // Requests 2-5: no Nominatim token, so neither Open-Meteo nor MET Norway could be asked: wttr.in alone.
    expect(res.slice(0, 5).map((r) => r.body.providers_asked)).toEqual([
      ['open-meteo', met],
      ...Array(4).fill(undefined),
    ]);
    expect(res.filter((r) => r.body.providers_asked !== undefined)).toHaveLength(5);
    // One Nominatim call per MET Norway answer (20 distinct cities), at most one per 1.2 s of the burst.
    const fromMet = res.filter((r) => r.body.source === met).length;
    expect(calls(NOMINATIM_PATH)).toBe(fromMet);
    expect(calls(MET_NORWAY_PATH)).toBe(fromMet);
    const lastMs = Math.max(...answers.map((a) => a.doneMs));
    expect(calls(NOMINATIM_PATH)).toBeLessThanOrEqual(1 + Math.floor(lastMs / 1_200));
    // Open-Meteo's geocoder: 5 requests through its breaker, 3 attempts each, once per request whichever
    // providers needed the place (it was 2 · 5 · 3 when Open-Meteo's forecast asked it on its own). Its
    // forecast: 5 requests with Nominatim's place, 3 attempts each, then its breaker is open.
    expect(calls('/v1/search')).toBe(5 * 3);
    expect(calls('/v1/forecast')).toBe(5 * 3);
    expect(balances).toEqual(Array(20).fill(48));
    expect(spent).toBe(2 * 20);
  });
});
