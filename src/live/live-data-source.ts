/**
 * The upstream side of live data behind the core's LiveDataSource port: per query type an ordered chain
 * of providers (fail-over, breakers, token buckets, one time budget); prices are classified first and go
 * to the chain for their kind; news and search without hits go on to the next provider. Results are normalised once more here, whichever provider answered: news
 * deduplicated and newest first, search results numbered.
 */

import NodeCache from 'node-cache';
import { AppError } from '../core/errors.js';
import type { LiveDataSource, LiveResult } from '../core/live-port.js';
import type { QueryType } from '../core/model.js';
import { placesOf } from './geocoding.js';
import { createHttpClient } from './http-client.js';
import type { LiveConfig } from './live-config.js';
import { type NewsItem, normaliseNewsItems } from './news-items.js';
import { type PriceQuery, parsePriceQuery } from './price-query.js';
import { type ChainOptions, ProviderChain } from './provider-chain.js';
import {
  type GeocodedPlace,
  joinVariables,
  type PriceKind,
  type ProviderTools,
} from './provider-descriptor.js';
import { PROVIDERS } from './provider-list.js';
import { chainMembers, priceMembers } from './providers.js';

const PRICE_KINDS: readonly PriceKind[] = ['fiat', 'crypto', 'metal', 'stock'];

/**
 * Why a price kind has no chain. A kind that only conditional providers serve (stocks: Finnhub with its key)
 * names the variables the operator would set; otherwise the configured order left its providers out.
 */
function noProviderFor(kind: PriceKind): AppError {
  const servers = PROVIDERS.filter((provider) => provider.serves.price?.kinds.includes(kind));
  const needs = servers.map(joinVariables);
  if (servers.length > 0 && needs.every((variables) => variables.length > 0)) {
    const title = `${kind[0]?.toUpperCase()}${kind.slice(1)}`;
    return new AppError(
      'not_found',
      `${title} prices are not served here: the operator has not configured a ${kind} provider (${needs.flat().join(', ')}).`,
    );
  }
  return new AppError(
    'not_found',
    `Prices of this kind (${kind}) are not served here: no provider for it is configured.`,
  );
}

function finish(type: QueryType, result: LiveResult): LiveResult {
  if (type === 'news' && Array.isArray(result.data.items)) {
    return {
      ...result,
      data: { ...result.data, items: normaliseNewsItems(result.data.items as NewsItem[]) },
    };
  }
  return result;
}

/**
 * Whether a valid result holds nothing, so the chain asks the next provider: news without items, search
 * without results. Weather and prices are never empty (a provider without the place or asset says not_found).
 */
export function isEmptyResult(type: QueryType, result: LiveResult): boolean {
  const list = type === 'news' ? result.data.items : type === 'search' ? result.data.results : undefined;
  return Array.isArray(list) && list.length === 0;
}

/** The geocoders' own tools: a geocoder that asked the geocoding chain would ask itself. */
const NO_TOOLS: ProviderTools = {
  geocode: () => Promise.reject(new AppError('internal', 'A geocoder cannot ask the geocoding chain.')),
};

/** The one HTTP client the providers share, as the configuration sets it up. */
export function httpClientFor(config: LiveConfig) {
  return createHttpClient({ userAgent: config.userAgent, timeoutMs: config.timeoutMs, ...config.retry });
}

export interface LiveChains {
  /** Place names to coordinates, for the weather providers that need them (MET Norway). */
  geocoding: ProviderChain;
  weather: ProviderChain;
  news: ProviderChain;
  search: ProviderChain;
  /** One chain per asset kind that some configured provider prices. */
  prices: Map<PriceKind, ProviderChain<PriceQuery>>;
}

/** How long a geocoded place is kept (places do not move), and how many are. */
const PLACE_TTL_S = 30 * 24 * 3600;
const PLACES_KEPT = 10_000;

/**
 * The tools the chains lend their providers: the geocoding chain (Open-Meteo's geocoder, then Nominatim),
 * its places kept for 30 days. It never waits for a token itself: it throws a NoCapacityError, and the
 * asking chain (weather) waits or moves on within its own budget.
 */
function providerTools(geocoding: ProviderChain): ProviderTools {
  const places = new NodeCache({
    stdTTL: PLACE_TTL_S,
    checkperiod: 3600,
    useClones: false,
    maxKeys: PLACES_KEPT,
  });
  return {
    async geocode(query, deadline) {
      const known = places.get<GeocodedPlace>(query);
      if (known) return known;
      const found = placesOf((await geocoding.fetch(query, { deadline, waitForTokens: false })).data);
      if (places.getStats().keys < PLACES_KEPT) places.set(query, found);
      return found;
    },
  };
}

/** The chains the configuration sets up, sharing one HTTP client. */
export function createChains(config: LiveConfig, options: ChainOptions = {}): LiveChains {
  const http = httpClientFor(config);
  const geocoding = new ProviderChain(
    'geocoding',
    chainMembers('geocoding', http, config, NO_TOOLS),
    options,
  );
  const tools = providerTools(geocoding);
  const pricing = priceMembers(http, config, tools);
  const prices = new Map<PriceKind, ProviderChain<PriceQuery>>();
  for (const kind of PRICE_KINDS) {
    const members = pricing.filter((p) => p.kinds.includes(kind));
    if (members.length > 0) prices.set(kind, new ProviderChain(`${kind} price`, members, options));
  }
  return {
    weather: new ProviderChain('weather', chainMembers('weather', http, config, tools), options),
    news: new ProviderChain('news', chainMembers('news', http, config, tools), {
      ...options,
      isEmpty: (result) => isEmptyResult('news', result),
    }),
    search: new ProviderChain('search', chainMembers('search', http, config, tools), {
      ...options,
      isEmpty: (result) => isEmptyResult('search', result),
    }),
    geocoding,
    prices,
  };
}

export function createLiveDataSource(config: LiveConfig, options: ChainOptions = {}): LiveDataSource {
  const all = createChains(config, options);
  const { prices, geocoding: _, ...chains } = all;
  const everyChain = [all.news, all.search, all.weather, all.geocoding, ...prices.values()];
  return {
    status: () => everyChain.flatMap((chain) => chain.status()),
    async fetch(type: QueryType, query: string): Promise<LiveResult> {
      if (type === 'price') {
        const parsed = parsePriceQuery(query, { stocks: prices.has('stock') });
        const chain = prices.get(parsed.kind);
        if (!chain) throw noProviderFor(parsed.kind);
        return chain.fetch(parsed);
      }
      return finish(type, await chains[type].fetch(query));
    },
  };
}
