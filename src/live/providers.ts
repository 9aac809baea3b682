/**
 * Every upstream provider as a chain member: its id (used in AC_*_PROVIDERS and as `source`), the rate
 * this service allows itself (below the published limit), and how to call it. Which providers a chain
 * holds, and their order, come from configuration; keyed providers join only when their key is set.
 */
import type { LiveResult } from '../core/live-port.js';
import { fetchBraveNews, fetchBraveWeb } from './brave.js';
import { fetchCoinbasePrice } from './coinbase.js';
import { fetchCryptoPrice } from './coingecko.js';
import { searchDuckDuckGo } from './duckduckgo.js';
import { fetchFinnhubPrice } from './finnhub.js';
import { fetchFiatPrice } from './frankfurter.js';
import { fetchGdeltNews } from './gdelt.js';
import { fetchGoldApiPrice } from './gold-api.js';
import { fetchGoogleNews } from './google-news.js';
import { fetchNews as fetchHackerNews } from './hn-algolia.js';
import type { HttpClient } from './http-client.js';
import { fetchKrakenPrice } from './kraken.js';
import type { LiveConfig } from './live-config.js';
import { fetchWeather as fetchOpenMeteo } from './open-meteo.js';
import type { PriceQuery } from './price-query.js';
import type { Provider } from './provider-chain.js';
import { mergeReferenceResults } from './reference-search.js';
import { fetchSearxng } from './searxng.js';
import { searchWikipedia } from './wikipedia.js';
import { fetchWttrWeather } from './wttr.js';

export type PriceKind = PriceQuery['kind'];

/** A price provider also says which kinds of asset it prices. */
export interface PriceProvider extends Provider<PriceQuery> {
  kinds: readonly PriceKind[];
}

export interface ProviderCatalogue {
  weather: Provider[];
  price: PriceProvider[];
  news: Provider[];
  search: Provider[];
}

export function providerCatalogue(http: HttpClient, config: LiveConfig): ProviderCatalogue {
  const weather: Provider[] = [
    { id: 'open-meteo', perMinute: 300, fetch: (q, d) => fetchOpenMeteo(http, config, q, d) },
    { id: 'wttr', perMinute: 20, fetch: (q, d) => fetchWttrWeather(http, config, q, d) },
  ];
  const price: PriceProvider[] = [
    {
      id: 'frankfurter',
      kinds: ['fiat'],
      perMinute: 60,
      fetch: (q, d) => fetchFiatPrice(http, config, q, d),
    },
    {
      id: 'coingecko',
      kinds: ['crypto'],
      perMinute: config.coingeckoApiKey ? 25 : 8,
      fetch: (q, d) => fetchCryptoPrice(http, config, q, d),
    },
    {
      id: 'coinbase',
      kinds: ['crypto'],
      perMinute: 300,
      fetch: (q, d) => fetchCoinbasePrice(http, config, q, d),
    },
    { id: 'kraken', kinds: ['crypto'], perMinute: 60, fetch: (q, d) => fetchKrakenPrice(http, config, q, d) },
    {
      id: 'gold-api',
      kinds: ['metal'],
      perMinute: 30,
      fetch: (q, d) => fetchGoldApiPrice(http, config, q, d),
    },
    {
      id: 'finnhub',
      kinds: ['stock'],
      perMinute: 50,
      fetch: (q, d) => fetchFinnhubPrice(http, config, q, d),
    },
  ];
  const news: Provider[] = [
    ...(config.braveApiKey
      ? [{ id: 'brave', perMinute: 50, fetch: (q: string, d: number) => fetchBraveNews(http, config, q, d) }]
      : []),
    { id: 'hn-algolia', perMinute: 150, fetch: (q, d) => fetchHackerNews(http, config, q, d) },
    { id: 'google-news', perMinute: 20, fetch: (q, d) => fetchGoogleNews(http, config, q, d) },
    { id: 'gdelt', perMinute: 10, fetch: (q, d) => fetchGdeltNews(http, config, q, d) },
  ];
  const search: Provider[] = [
    ...(config.urls.searxng
      ? [{ id: 'searxng', perMinute: 60, fetch: (q: string, d: number) => fetchSearxng(http, config, q, d) }]
      : []),
    ...(config.braveApiKey
      ? [{ id: 'brave', perMinute: 50, fetch: (q: string, d: number) => fetchBraveWeb(http, config, q, d) }]
      : []),
    { id: 'duckduckgo', perMinute: 60, fetch: (q, d) => searchReference(http, config, q, d) },
  ];
  return { weather, price, news, search };
}

/** Orders providers as `order` lists them; ids not listed are left out. */
export function ordered<P extends { id: string }>(providers: P[], order: readonly string[]): P[] {
  return order.flatMap((id) => providers.filter((p) => p.id === id));
}

/** DuckDuckGo Instant Answer and Wikipedia together: reference coverage, not web search. */
async function searchReference(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline: number,
): Promise<LiveResult> {
  return mergeReferenceResults(
    await Promise.allSettled([
      searchDuckDuckGo(http, config, query, deadline),
      searchWikipedia(http, config, query, deadline),
    ]),
  );
}
