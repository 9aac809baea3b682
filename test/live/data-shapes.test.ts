/**
 * Issue 33: every provider's normalised answer has the published shape of its query_type, so that the
 * schemas and the answers cannot drift apart. Each provider answers its own fixture (the real upstream's
 * shape) through a chain of its own, as the service calls it; the answer's `data` is checked against the JSON
 * Schema published for that query_type (the one OpenAPI and MCP carry, with additionalProperties false, so
 * a field the schema does not describe fails too) and parsed by its zod schema. A provider added to the list
 * without a case here fails the completeness test.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { QueryType } from '../../src/core/model.js';
import { LIVE_DATA_SHAPES } from '../../src/core/operations/live-data.schemas.js';
import type { LiveConfig } from '../../src/live/live-config.js';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { type ChainKind, servesKind } from '../../src/live/provider-descriptor.js';
import { PROVIDERS } from '../../src/live/provider-list.js';
import type { FakeHandler } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { BRAVE_NEWS_PATH, BRAVE_NEWS_RUST, BRAVE_WEB_PATH, BRAVE_WEB_RUST } from '../fixtures/live/brave.js';
import { COINBASE_BTC_EUR, FINNHUB_AAPL, GOLD_XAU, KRAKEN_XBTUSD } from '../fixtures/live/exchanges.js';
import { GDELT_PATH, GDELT_RUST } from '../fixtures/live/gdelt.js';
import { GOOGLE_NEWS_PATH, GOOGLE_NEWS_RUST } from '../fixtures/live/google-news.js';
import { HN_RUST } from '../fixtures/live/hn-algolia.js';
import { MET_NORWAY_PARIS, MET_NORWAY_PATH } from '../fixtures/live/met-norway.js';
import { NOMINATIM_PARIS, NOMINATIM_PATH } from '../fixtures/live/nominatim.js';
import { FORECAST_PARIS, GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { FRANKFURTER_EUR_GBP, SEARCH_BTC, SIMPLE_PRICE } from '../fixtures/live/price.js';
import { DDG_PATH, ddgPython, WIKI_PATH, WIKI_PYTHON } from '../fixtures/live/search.js';
import { SEARXNG_PATH, SEARXNG_RUST } from '../fixtures/live/searxng.js';
import { WTTR_PARIS } from '../fixtures/live/wttr.js';
import { liveConfig } from './helpers.js';

interface Case {
  /** What is checked: `<provider> <kind>`, e.g. `wttr weather`; a geocoder's through a weather provider. */
  name: string;
  provider: string;
  kind: ChainKind;
  type: QueryType;
  query: string;
  /** The fake upstream's routes; every URL key in `urls` points at it. */
  routes: (origin: string) => Record<string, FakeHandler>;
  urls: string[];
  config?: Partial<LiveConfig>;
  /** The source the answer names (default: the provider). */
  source?: string;
}

const XML = 'application/rss+xml; charset=utf-8';

const CASES: Case[] = [
  {
    name: 'open-meteo weather',
    provider: 'open-meteo',
    kind: 'weather',
    type: 'weather',
    query: 'paris, fr',
    routes: () => ({ '/v1/search': { json: GEOCODING_PARIS }, '/v1/forecast': { json: FORECAST_PARIS } }),
    urls: ['openMeteoGeocoding', 'openMeteoForecast'],
    config: { providers: { weather: ['open-meteo'], geocoding: ['open-meteo'] } },
  },
  {
    name: 'met-norway weather (Open-Meteo geocoding)',
    provider: 'open-meteo',
    kind: 'geocoding',
    type: 'weather',
    query: 'paris',
    routes: () => ({
      '/v1/search': { json: GEOCODING_PARIS },
      [MET_NORWAY_PATH]: { json: MET_NORWAY_PARIS },
    }),
    urls: ['openMeteoGeocoding', 'metNorway'],
    config: { providers: { weather: ['met-norway'], geocoding: ['open-meteo'] } },
    source: 'met-norway',
  },
  {
    name: 'met-norway weather (Nominatim geocoding)',
    provider: 'met-norway',
    kind: 'weather',
    type: 'weather',
    query: 'paris',
    routes: () => ({
      [NOMINATIM_PATH]: { json: NOMINATIM_PARIS },
      [MET_NORWAY_PATH]: { json: MET_NORWAY_PARIS },
    }),
    urls: ['nominatim', 'metNorway'],
    config: { providers: { weather: ['met-norway'], geocoding: ['nominatim'] } },
  },
  {
    name: 'open-meteo weather (Nominatim geocoding)',
    provider: 'nominatim',
    kind: 'geocoding',
    type: 'weather',
    query: 'paris',
    routes: () => ({ [NOMINATIM_PATH]: { json: NOMINATIM_PARIS }, '/v1/forecast': { json: FORECAST_PARIS } }),
    urls: ['nominatim', 'openMeteoForecast'],
    config: { providers: { weather: ['open-meteo'], geocoding: ['nominatim'] } },
    source: 'open-meteo',
  },
  {
    name: 'wttr weather',
    provider: 'wttr',
    kind: 'weather',
    type: 'weather',
    query: 'paris',
    routes: () => ({ '/paris': { json: WTTR_PARIS } }),
    urls: ['wttr'],
    config: { providers: { weather: ['wttr'] } },
  },
  {
    name: 'frankfurter price',
    provider: 'frankfurter',
    kind: 'price',
    type: 'price',
    query: 'eur to gbp',
    routes: () => ({ '/v1/latest': { json: FRANKFURTER_EUR_GBP } }),
    urls: ['frankfurter'],
    config: { providers: { price: ['frankfurter'] } },
  },
  {
    name: 'coingecko price',
    provider: 'coingecko',
    kind: 'price',
    type: 'price',
    query: 'btc in eur',
    routes: () => ({
      '/api/v3/search': { json: SEARCH_BTC },
      '/api/v3/simple/price': { json: SIMPLE_PRICE },
    }),
    urls: ['coingecko'],
    config: { providers: { price: ['coingecko'] } },
  },
  {
    name: 'coinbase price',
    provider: 'coinbase',
    kind: 'price',
    type: 'price',
    query: 'bitcoin in eur',
    routes: () => ({ '/v2/prices/BTC-EUR/spot': { json: COINBASE_BTC_EUR } }),
    urls: ['coinbase'],
    config: { providers: { price: ['coinbase'] } },
  },
  {
    name: 'kraken price',
    provider: 'kraken',
    kind: 'price',
    type: 'price',
    query: 'bitcoin',
    routes: () => ({ '/0/public/Ticker': { json: KRAKEN_XBTUSD } }),
    urls: ['kraken'],
    config: { providers: { price: ['kraken'] } },
  },
  {
    name: 'gold-api price',
    provider: 'gold-api',
    kind: 'price',
    type: 'price',
    query: 'gold',
    routes: () => ({ '/price/XAU': { json: GOLD_XAU } }),
    urls: ['goldApi'],
    config: { providers: { price: ['gold-api'] } },
  },
  {
    name: 'finnhub price',
    provider: 'finnhub',
    kind: 'price',
    type: 'price',
    query: 'aapl stock',
    routes: () => ({ '/api/v1/quote': { json: FINNHUB_AAPL } }),
    urls: ['finnhub'],
    config: { providers: { price: ['finnhub'] }, apiKeys: { finnhub: 'fh-test-key' } },
  },
  {
    name: 'hn-algolia news',
    provider: 'hn-algolia',
    kind: 'news',
    type: 'news',
    query: 'rust',
    routes: () => ({ '/api/v1/search_by_date': { json: HN_RUST } }),
    urls: ['hnAlgolia'],
    config: { providers: { news: ['hn-algolia'] } },
  },
  {
    name: 'google-news news',
    provider: 'google-news',
    kind: 'news',
    type: 'news',
    query: 'rust',
    routes: () => ({ [GOOGLE_NEWS_PATH]: { text: GOOGLE_NEWS_RUST, contentType: XML } }),
    urls: ['googleNews'],
    config: { providers: { news: ['google-news'] } },
  },
  {
    name: 'gdelt news',
    provider: 'gdelt',
    kind: 'news',
    type: 'news',
    query: 'rust',
    routes: () => ({ [GDELT_PATH]: { json: GDELT_RUST } }),
    urls: ['gdelt'],
    config: { providers: { news: ['gdelt'] } },
  },
  {
    name: 'brave news',
    provider: 'brave',
    kind: 'news',
    type: 'news',
    query: 'rust',
    routes: () => ({ [BRAVE_NEWS_PATH]: { json: BRAVE_NEWS_RUST } }),
    urls: ['brave'],
    config: { providers: { news: ['brave'] }, apiKeys: { brave: 'k' } },
  },
  {
    name: 'searxng search',
    provider: 'searxng',
    kind: 'search',
    type: 'search',
    query: 'rust language',
    routes: () => ({ [SEARXNG_PATH]: { json: SEARXNG_RUST } }),
    urls: ['searxng'],
    config: { providers: { search: ['searxng'] } },
  },
  {
    name: 'brave search',
    provider: 'brave',
    kind: 'search',
    type: 'search',
    query: 'rust',
    routes: () => ({ [BRAVE_WEB_PATH]: { json: BRAVE_WEB_RUST } }),
    urls: ['brave'],
    config: { providers: { search: ['brave'] }, apiKeys: { brave: 'k' } },
  },
  {
    name: 'duckduckgo search (DuckDuckGo and Wikipedia)',
    provider: 'duckduckgo',
    kind: 'search',
    type: 'search',
    query: 'python',
    routes: (origin) => ({
      [DDG_PATH]: { text: JSON.stringify(ddgPython(origin)), contentType: 'application/x-javascript' },
      [WIKI_PATH]: { json: WIKI_PYTHON },
    }),
    urls: ['duckduckgo', 'wikipedia'],
    config: { providers: { search: ['duckduckgo'] } },
    source: 'duckduckgo+wikipedia',
  },
];

/** The published JSON Schema of each query_type's data, compiled as OpenAPI 3.1 clients read it. */
function validators() {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  return Object.fromEntries(
    Object.entries(LIVE_DATA_SHAPES).map(([type, schema]) => {
      const { $schema: _, ...json } = z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12' });
      return [type, ajv.compile(json)];
    }),
  ) as Record<QueryType, ReturnType<Ajv2020['compile']>>;
}

describe("every provider's answers have the published shape of their query_type", () => {
  const up = useFakeUpstream();
  const check = validators();

  it('has a case for every provider and every kind of data it serves', () => {
    const covered = new Set(CASES.map((c) => `${c.provider} ${c.kind}`));
    const served = PROVIDERS.flatMap((provider) =>
      (['weather', 'price', 'news', 'search', 'geocoding'] as const)
        .filter((kind) => servesKind(provider, kind))
        .map((kind) => `${provider.id} ${kind}`),
    );
    expect(served.filter((entry) => !covered.has(entry))).toEqual([]);
  });

  it.each(CASES)('$name', async (c) => {
    for (const [path, handler] of Object.entries(c.routes(up.url))) up.route(path, handler);
    const urls = Object.fromEntries(c.urls.map((key) => [key, up.url]));
    const live = createLiveDataSource(liveConfig(urls, c.config));
    const result = await live.fetch(c.type, c.query);
    expect(result.source).toBe(c.source ?? c.provider);
    const validate = check[c.type];
    expect(validate(result.data), JSON.stringify(validate.errors)).toBe(true);
    expect(LIVE_DATA_SHAPES[c.type].parse(result.data)).toEqual(result.data);
    // Not vacuous: a list answer has something in it.
    const list = result.data.items ?? result.data.results;
    if (list !== undefined) expect((list as unknown[]).length).toBeGreaterThan(0);
  });

  it('refuses data of another shape, or with a field the schema does not describe', () => {
    expect(check.weather({ items: [] })).toBe(false);
    const news = { items: [{ title: 't', url: 'https://x.example/', published_at: null, source: 's' }] };
    expect(check.news(news)).toBe(true);
    expect(check.news({ items: [{ ...news.items[0], extra: 1 }] })).toBe(false);
    expect(check.news({ items: [{ ...news.items[0], url: 'javascript:alert(1)' }] })).toBe(false);
  });
});
