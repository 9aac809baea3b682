/**
 * Every live-data provider, one descriptor each. The order here is the default order of every chain a
 * provider joins (AC_*_PROVIDERS reorder it); the configuration's variables, the chains and the test
 * helpers are all derived from this list. Adding a provider: its file with its descriptor, one line here.
 */
import { BRAVE_PROVIDER } from './brave.js';
import { COINBASE_PROVIDER } from './coinbase.js';
import { COINGECKO_PROVIDER } from './coingecko.js';
import { FINNHUB_PROVIDER } from './finnhub.js';
import { FRANKFURTER_PROVIDER } from './frankfurter.js';
import { GDELT_PROVIDER } from './gdelt.js';
import { GOLD_API_PROVIDER } from './gold-api.js';
import { GOOGLE_NEWS_PROVIDER } from './google-news.js';
import { HN_ALGOLIA_PROVIDER } from './hn-algolia.js';
import { KRAKEN_PROVIDER } from './kraken.js';
import { MET_NORWAY_PROVIDER } from './met-norway.js';
import { NOMINATIM_PROVIDER } from './nominatim.js';
import { OPEN_METEO_PROVIDER } from './open-meteo.js';
import type { ProviderDescriptor } from './provider-descriptor.js';
import { DUCKDUCKGO_PROVIDER } from './reference-search.js';
import { SEARXNG_PROVIDER } from './searxng.js';
import { WTTR_PROVIDER } from './wttr.js';

export const PROVIDERS: readonly ProviderDescriptor[] = [
  // weather: MET Norway before wttr.in, a national service on other hosts than Open-Meteo's; wttr.in, which
  // geocodes itself, stays last. Geocoding (for MET Norway): Open-Meteo's geocoder, then Nominatim.
  OPEN_METEO_PROVIDER,
  MET_NORWAY_PROVIDER,
  WTTR_PROVIDER,
  NOMINATIM_PROVIDER,
  // price
  FRANKFURTER_PROVIDER,
  COINGECKO_PROVIDER,
  COINBASE_PROVIDER,
  KRAKEN_PROVIDER,
  GOLD_API_PROVIDER,
  FINNHUB_PROVIDER,
  // search and news
  SEARXNG_PROVIDER,
  BRAVE_PROVIDER,
  HN_ALGOLIA_PROVIDER,
  GOOGLE_NEWS_PROVIDER,
  GDELT_PROVIDER,
  DUCKDUCKGO_PROVIDER,
];
