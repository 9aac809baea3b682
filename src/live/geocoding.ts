/**
 * The Open-Meteo geocoder (keyless): the first member of the geocoding chain that the weather providers
 * needing coordinates ask (Open-Meteo's forecast, MET Norway's Locationforecast; Nominatim next). One
 * not-found rule, one normalised `location` and `alternatives`, so that every weather provider answers a
 * place in the same words.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import type { GeocodedPlace, Place } from './provider-descriptor.js';
import { cleanText } from './text.js';

/** Open-Meteo, whose geocoder this is: its failures are reported under its name, whoever asked. */
export const OPEN_METEO: Upstream = { id: 'open-meteo', name: 'Open-Meteo', kind: 'weather' };

/** The `LiveConfig.urls` key of the geocoder's base URL (declared by Open-Meteo's descriptor). */
export const GEOCODING_URL_KEY = 'openMeteoGeocoding';

/**
 * The longest a geocoder's attempt may take (or the configured upstream timeout, if shorter). A place
 * lookup is one indexed search that answers in well under a second, and two weather providers wait for it,
 * so a hanging geocoder must not eat the budget of the providers after it.
 */
export const GEOCODER_TIMEOUT_MS = 3_000;

const placeSchema = z.object({
  name: z.string(),
  latitude: z.number(),
  longitude: z.number(),
  elevation: z.number().nullish(),
  country: z.string().nullish(),
  country_code: z.string().nullish(),
  admin1: z.string().nullish(),
  timezone: z.string().nullish(),
}) satisfies z.ZodType<Place>;

/** No match: the `results` key is missing. */
const geocodingSchema = z.object({ results: z.array(placeSchema).optional() });

/** "paris, fr" → name "paris", country code "FR"; anything else is all name. */
export function parsePlaceQuery(query: string): { name: string; countryCode?: string } {
  const comma = query.lastIndexOf(',');
  if (comma > 0) {
    const suffix = query.slice(comma + 1).trim();
    const name = query.slice(0, comma).trim();
    if (name && /^[a-z]{2}$/i.test(suffix)) return { name, countryCode: suffix.toUpperCase() };
  }
  return { name: query.trim() };
}

/** Geocodes the place query; AppError `not_found` when nothing matches, the HTTP client's errors otherwise. */
export async function geocodePlace(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<GeocodedPlace> {
  const { name, countryCode } = parsePlaceQuery(query);
  const url = buildUrl(baseUrl(config, GEOCODING_URL_KEY, OPEN_METEO), '/v1/search', {
    name,
    count: '5',
    language: 'en',
    format: 'json',
    countryCode,
  });
  const geocoding = await http.getJson(OPEN_METEO, url, geocodingSchema, {
    deadline,
    timeoutMs: GEOCODER_TIMEOUT_MS,
  });
  const [place, ...others] = geocoding.results ?? [];
  if (!place) {
    throw new AppError(
      'not_found',
      `No place called "${query}" was found; check the spelling or add the country, e.g. "Paris, FR".`,
      { source: OPEN_METEO.id },
    );
  }
  return { place, others };
}

/** The geocoding chain's member: the same call, its place and candidates as the result's `data`. */
export async function fetchOpenMeteoPlaces(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline: number,
): Promise<LiveResult> {
  return { source: OPEN_METEO.id, data: { ...(await geocodePlace(http, config, query, deadline)) } };
}

/** The GeocodedPlace a geocoding chain's result holds. */
export function placesOf(data: LiveResult['data']): GeocodedPlace {
  return data as unknown as GeocodedPlace;
}

function placeText(value: string | null | undefined): string | null {
  return value ? cleanText(value) : null;
}

/** The weather contract's `location`. */
export function describePlace(place: Place) {
  return {
    name: cleanText(place.name),
    admin1: placeText(place.admin1),
    country: placeText(place.country),
    country_code: place.country_code ? place.country_code.toUpperCase() : null,
    latitude: place.latitude,
    longitude: place.longitude,
    timezone: place.timezone ?? null,
  };
}

/** The weather contract's `alternatives`: the other places of that name. */
export function describeAlternatives(others: Place[]) {
  return others.map((other) => ({
    name: cleanText(other.name),
    admin1: placeText(other.admin1),
    country: placeText(other.country),
  }));
}
