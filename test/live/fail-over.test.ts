/** The default chains: with their first upstream dead, each kind of data still answers from the next. */
import { beforeAll, describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { PROVIDER_IDS } from '../../src/live/providers.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { COINBASE_BTC_EUR, GOLD_XAU } from '../fixtures/live/exchanges.js';
import { GOOGLE_NEWS_PATH, GOOGLE_NEWS_RUST } from '../fixtures/live/google-news.js';
import { MET_NORWAY_PARIS, MET_NORWAY_PATH } from '../fixtures/live/met-norway.js';
import { GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { WIKI_PATH, WIKI_PYTHON } from '../fixtures/live/search.js';
import { WTTR_PARIS } from '../fixtures/live/wttr.js';
import { appErrorOf, liveConfig } from './helpers.js';

describe('fail-over across the default chains', () => {
  let dead: string;

  beforeAll(async () => {
    dead = await closedPortUrl();
  });
  const up = useFakeUpstream({
    reset: 'once',
    routes: {
      '/paris': { json: WTTR_PARIS },
      '/api/v3/search': { status: 500 },
      '/v2/prices/BTC-EUR/spot': { json: COINBASE_BTC_EUR },
      '/price/XAU': { json: GOLD_XAU },
      [GOOGLE_NEWS_PATH]: { text: GOOGLE_NEWS_RUST, contentType: 'application/rss+xml; charset=utf-8' },
      '/': { status: 503 },
      [WIKI_PATH]: { json: WIKI_PYTHON },
    },
  });

  const source = () =>
    createLiveDataSource(
      liveConfig(
        {
          openMeteoGeocoding: dead,
          openMeteoForecast: dead,
          wttr: up.url,
          coingecko: up.url,
          coinbase: up.url,
          goldApi: up.url,
          hnAlgolia: dead,
          googleNews: up.url,
          searxng: dead,
          duckduckgo: up.url,
          wikipedia: up.url,
        },
        { providers: { ...PROVIDER_IDS } },
      ),
    );

  it('weather: Open-Meteo unreachable, geocoder included (so MET Norway cannot geocode), wttr.in answers', async () => {
    const result = await source().fetch('weather', 'paris');
    expect(result.source).toBe('wttr');
    expect(result.data.location).toMatchObject({ name: 'Paris' });
  });

  it("weather: Open-Meteo's forecast answering 500, MET Norway answers with the geocoder's place", async () => {
    up.route('/v1/search', { json: GEOCODING_PARIS });
    up.route('/v1/forecast', { status: 500 });
    up.route(MET_NORWAY_PATH, { json: MET_NORWAY_PARIS });
    const weather = createLiveDataSource(
      liveConfig(
        { openMeteoGeocoding: up.url, openMeteoForecast: up.url, metNorway: up.url, wttr: up.url },
        { providers: { ...PROVIDER_IDS } },
      ),
    );
    expect(PROVIDER_IDS.weather).toEqual(['open-meteo', 'met-norway', 'wttr']);
    const result = await weather.fetch('weather', 'paris');
    expect(result.source).toBe('met-norway');
    expect(result.data.location).toMatchObject({ name: 'Paris', country_code: 'FR' });
    expect(result.data.temperature_c).toBe(7.1);
  });

  it('crypto price: CoinGecko failing, Coinbase answers', async () => {
    const result = await source().fetch('price', 'bitcoin in eur');
    expect(result.source).toBe('coinbase');
    expect(result.data).toMatchObject({ price: 57123.455, currency: 'EUR' });
  });

  it('metals go to gold-api; stocks without a Finnhub key are a clear 404', async () => {
    expect((await source().fetch('price', 'gold')).source).toBe('gold-api');
    const err = await appErrorOf(source().fetch('price', 'aapl stock'));
    expect(err.code).toBe('not_found');
    expect(err.message).toMatch(/AC_FINNHUB_API_KEY/);
  });

  it('news: Hacker News unreachable, Google News answers, deduplicated and newest first', async () => {
    const result = await source().fetch('news', 'rust');
    expect(result.source).toBe('google-news');
    const items = result.data.items as { published_at: string | null; url: string }[];
    expect(items.length).toBeGreaterThan(0);
    const dates = items.map((i) => i.published_at).filter((d): d is string => d !== null);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(new Set(items.map((i) => i.url)).size).toBe(items.length);
  });

  it('search: SearXNG unreachable, reference search answers (DuckDuckGo down, Wikipedia up)', async () => {
    const result = await source().fetch('search', 'python');
    expect(result.source).toBe('wikipedia');
    expect(result.data.coverage).toBe('reference');
    expect((result.data.results as { position: number }[])[0]?.position).toBe(1);
  });

  it('a dead provider is skipped once its breaker opens', async () => {
    const weather = createLiveDataSource(
      liveConfig(
        { openMeteoGeocoding: up.url, wttr: up.url },
        { providers: { weather: ['open-meteo', 'wttr'] } },
      ),
      { breaker: { threshold: 2 } },
    );
    up.route('/v1/search', { status: 500 });
    up.requests.length = 0;
    for (let i = 0; i < 4; i++) expect((await weather.fetch('weather', 'paris')).source).toBe('wttr');
    const geocodingCalls = up.requests.filter((r) => r.path === '/v1/search').length;
    // 3 attempts (2 retries) on each of the first 2 requests; then the breaker is open and Open-Meteo is skipped.
    expect(geocodingCalls).toBe(6);
  });
});
