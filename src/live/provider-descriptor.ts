/**
 * What a live-data provider declares about itself, once, in its own file: its id, what it serves, the
 * environment variables that configure it, its rate and how to call it. The chains, their default order,
 * the configuration's variables and the test helpers all read these declarations; none repeats them.
 */
import type { LiveResult } from '../core/live-port.js';
import { QUERY_TYPES, type QueryType } from '../core/model.js';
import type { HttpClient } from './http-client.js';
import type { LiveConfig } from './live-config.js';
import type { PriceQuery } from './price-query.js';

export type PriceKind = PriceQuery['kind'];

/** A place as the geocoders describe it (Open-Meteo's field names; others are mapped to them). */
export interface Place {
  name: string;
  latitude: number;
  longitude: number;
  /** Metres, when the geocoder knows it. */
  elevation?: number | null;
  country?: string | null;
  country_code?: string | null;
  /** The first-level region: a state, a province. */
  admin1?: string | null;
  timezone?: string | null;
}

/** A place and the other candidates of its name, as a geocoder found them (geocoding.ts). */
export interface GeocodedPlace {
  place: Place;
  others: Place[];
}

/** What the chains lend a provider's fetch: the geocoding chain, for providers that need coordinates. */
export interface ProviderTools {
  /**
   * Geocodes a place query through the geocoding chain (places kept; asked once per request, its answer or
   * failure shared by the request's providers). Rejects with an UnmetNeedError when no geocoder can give
   * the place (its `reason` the geocoding chain's error: `not_found` when no geocoder knows it), which the
   * caller's chain skips the provider for, without blame; with a NoCapacityError when a geocoder only lacks
   * a token (the caller's chain may wait for it). A provider lets both through.
   */
  geocode(query: string, deadline: number): Promise<GeocodedPlace>;
}

/** One call to the upstream; `deadline` is the chain's (epoch ms). Throws AppError only. */
export type ProviderFetch<Q = string> = (
  http: HttpClient,
  config: LiveConfig,
  query: Q,
  deadline: number,
  tools: ProviderTools,
) => Promise<LiveResult>;

/** The kinds of data a provider serves, each with its fetch; a price provider also names its asset kinds. */
export interface ProviderServes {
  weather?: ProviderFetch;
  /** Geocoding for the weather providers that need coordinates: `data` is a GeocodedPlace. */
  geocoding?: ProviderFetch;
  news?: ProviderFetch;
  search?: ProviderFetch;
  price?: { kinds: readonly PriceKind[]; fetch: ProviderFetch<PriceQuery> };
}

/** A base URL of the provider (scheme, host and port only; the provider appends its documented path). */
export interface BaseUrlSetting {
  /** The environment variable that sets it, e.g. `AC_WTTR_URL`. */
  variable: string;
  /** The real public host. Without one the URL is optional and the provider joins only when it is set. */
  default?: string;
}

/** The provider's API key, read from `variable` into `LiveConfig.apiKeys[id]`. */
export interface ApiKeySetting {
  variable: string;
  /** Without the key the provider joins no chain (otherwise the key is optional, e.g. a higher rate). */
  requiredToJoin: boolean;
}

export interface ProviderDescriptor {
  /** Stable and unique: the `source` of its results and its name in AC_*_PROVIDERS. */
  id: string;
  serves: ProviderServes;
  /** Its base URLs by key of `LiveConfig.urls` (keys unique across providers), e.g. `{ wttr: {...} }`. */
  urls: Readonly<Record<string, BaseUrlSetting>>;
  apiKey?: ApiKeySetting;
  /** Sustained calls per minute this service allows itself (below the published limit): its token bucket. */
  perMinute: number;
  /** The rate when its (optional) API key is set, if the upstream allows more then. */
  perMinuteWithKey?: number;
  /** Its token bucket's size (default: ten seconds' worth); 1 for an upstream that allows no bursts. */
  burst?: number;
}

/**
 * The kinds of data a chain serves; prices go to one chain per asset kind. `geocoding` is the chain that
 * turns place names into coordinates for the weather providers that need them.
 */
export type ChainKind = QueryType | 'geocoding';

export const CHAIN_KINDS: readonly ChainKind[] = [...QUERY_TYPES, 'geocoding'];

export function servesKind(provider: ProviderDescriptor, kind: ChainKind): boolean {
  return provider.serves[kind] !== undefined;
}

/** The variables without which the provider joins no chain: a required key, a URL without a default. */
export function joinVariables(provider: ProviderDescriptor): string[] {
  return [
    ...(provider.apiKey?.requiredToJoin ? [provider.apiKey.variable] : []),
    ...Object.values(provider.urls)
      .filter((url) => url.default === undefined)
      .map((url) => url.variable),
  ];
}

/** Whether the configuration lets the provider join its chains (its required key and URLs are set). */
export function canJoin(provider: ProviderDescriptor, config: LiveConfig): boolean {
  if (provider.apiKey?.requiredToJoin && !config.apiKeys?.[provider.id]) return false;
  return Object.entries(provider.urls).every(([key, url]) => url.default !== undefined || !!config.urls[key]);
}

/**
 * Its token-bucket rate in this instance under this configuration: the provider's rate (with or without its
 * key), divided among the configured instances.
 */
export function rateOf(provider: ProviderDescriptor, config: LiveConfig): number {
  const rate =
    config.apiKeys?.[provider.id] && provider.perMinuteWithKey !== undefined
      ? provider.perMinuteWithKey
      : provider.perMinute;
  return rate / (config.instances ?? 1);
}
