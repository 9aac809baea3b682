/**
 * The upstream side of live data behind the core's LiveDataSource port: per query type an ordered chain
 * of providers (fail-over, breakers, token buckets, one time budget); prices are classified first and go
 * to the chain for their kind; news and search without hits go on to the next provider. Results are normalised once more here, whichever provider answered: news
 * deduplicated and newest first, search results numbered.
 */

import NodeCache from 'node-cache';
import { AppError, toAppError } from '../core/errors.js';
import type { LiveDataSource, LiveResult } from '../core/live-port.js';
import type { QueryType } from '../core/model.js';
import { placesOf } from './geocoding.js';
import { createHttpClient } from './http-client.js';
import type { LiveConfig } from './live-config.js';
import { type NewsItem, normaliseNewsItems } from './news-items.js';
import { type PriceQuery, parsePriceQuery } from './price-query.js';
import {
  type ChainOptions,
  ChainProgress,
  NoCapacityError,
  ProviderChain,
  type RequestScope,
  UnmetNeedError,
} from './provider-chain.js';
import { type GeocodedPlace, joinVariables, type PriceKind } from './provider-descriptor.js';
import { PROVIDERS } from './provider-list.js';
import { chainMembers, priceMembers, type ToolsFor } from './providers.js';

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
const NO_TOOLS: ToolsFor = () => ({
  geocode: () => Promise.reject(new AppError('internal', 'A geocoder cannot ask the geocoding chain.')),
});

/** The one HTTP client the providers share, as the configuration sets it up. */
export function httpClientFor(config: LiveConfig) {
  return createHttpClient({ userAgent: config.userAgent, timeoutMs: config.timeoutMs, ...config.retry });
}

export interface LiveChains {
  /** Place names to coordinates, for the weather providers that need them (Open-Meteo, MET Norway). */
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

/** One request's geocoding of one place query: where the geocoding chain got to, and how it ended. */
interface Geocoding {
  progress: ChainProgress;
  /** The place, or the failure every provider of the request that needs coordinates shares. */
  settled?: Promise<GeocodedPlace>;
}

/**
 * The tools the chains lend their providers: the geocoding chain (Open-Meteo's geocoder, then Nominatim),
 * its places kept for 30 days, asked at most once per request and place: the place or the failure is
 * shared by every provider of the request that needs coordinates, so a failing geocoder counts one failure
 * (with its retries) per request, not one per provider. A failure reaches those providers as an
 * UnmetNeedError: their chain skips them at once, not blamed, and goes on to the providers that geocode
 * themselves (wttr.in). The geocoding chain never waits for a token itself: it throws a NoCapacityError,
 * which is not kept, and the asking chain (weather) waits or moves on within its own budget; asked again
 * after that wait, the geocoding chain goes on from where it stopped, without asking a geocoder twice.
 */
function geocodingTools(geocoding: ProviderChain): ToolsFor {
  const places = new NodeCache({
    stdTTL: PLACE_TTL_S,
    checkperiod: 3600,
    useClones: false,
    maxKeys: PLACES_KEPT,
  });
  async function ask(query: string, deadline: number, scope: RequestScope, state: Geocoding) {
    try {
      const result = await geocoding.fetch(query, {
        deadline,
        waitForTokens: false,
        scope,
        progress: state.progress,
      });
      const found = placesOf(result.data);
      if (places.getStats().keys < PLACES_KEPT) places.set(query, found);
      return found;
    } catch (err) {
      if (err instanceof NoCapacityError) {
        state.settled = undefined; // only a token was missing: the next ask tries again
        throw err;
      }
      throw new UnmetNeedError(toAppError(err));
    }
  }
  return (scope) => ({
    geocode(query, deadline) {
      const known = places.get<GeocodedPlace>(query);
      if (known) return Promise.resolve(known);
      const state = scope.memo<Geocoding>(`geocode:${query}`, () => ({ progress: new ChainProgress() }));
      state.settled ??= ask(query, deadline, scope, state);
      return state.settled;
    },
  });
}

/** The chains the configuration sets up, sharing one HTTP client. */
export function createChains(config: LiveConfig, options: ChainOptions = {}): LiveChains {
  const http = httpClientFor(config);
  const geocoding = new ProviderChain(
    'geocoding',
    chainMembers('geocoding', http, config, NO_TOOLS),
    options,
  );
  const tools = geocodingTools(geocoding);
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
