/**
 * Geocoding from Nominatim (OpenStreetMap's geocoder, keyless): `/search?q={name}&format=jsonv2` with the
 * address broken down, as the second member of the geocoding chain, so that MET Norway still finds its
 * coordinates while Open-Meteo (whose geocoder is first) is down or rate-limited.
 *
 * Its usage policy (operations.osmfoundation.org/policies/nominatim): at most one request a second, an
 * identifying User-Agent (the HTTP client sends the service's), results cached (the geocoding chain keeps
 * places for 30 days), no heavy use. Hence 50 a minute with no burst; an operator with heavy weather
 * traffic drops it (`AC_GEOCODING_PROVIDERS=open-meteo`) or points AC_NOMINATIM_URL at their own instance.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { GEOCODER_TIMEOUT_MS, parsePlaceQuery } from './geocoding.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import type { Place, ProviderDescriptor } from './provider-descriptor.js';

export const NOMINATIM: Upstream = { id: 'nominatim', name: 'Nominatim', kind: 'geocoding' };

export const SEARCH_PATH = '/search';

/** A decimal degree as Nominatim writes it: a string. */
const degree = z
  .string()
  .trim()
  .regex(/^-?\d{1,3}(\.\d+)?$/)
  .transform(Number);

const resultSchema = z.object({
  lat: degree,
  lon: degree,
  name: z.string().nullish(),
  display_name: z.string(),
  address: z
    .object({
      city: z.string().optional(),
      town: z.string().optional(),
      village: z.string().optional(),
      state: z.string().optional(),
      country: z.string().optional(),
      country_code: z.string().optional(),
    })
    .optional(),
});

/** No match: an empty array. */
const searchSchema = z.array(resultSchema);

/** A Nominatim result in the geocoders' common words (Open-Meteo's); Nominatim gives no time zone. */
export function toPlace(result: z.output<typeof resultSchema>): Place {
  const address = result.address ?? {};
  const name =
    result.name || address.city || address.town || address.village || result.display_name.split(',')[0];
  return {
    name: (name ?? result.display_name).trim(),
    latitude: result.lat,
    longitude: result.lon,
    elevation: null,
    country: address.country ?? null,
    country_code: address.country_code ?? null,
    admin1: address.state ?? null,
    timezone: null,
  };
}

export async function fetchNominatimPlaces(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline: number,
): Promise<LiveResult> {
  const { name, countryCode } = parsePlaceQuery(query);
  const url = buildUrl(baseUrl(config, 'nominatim', NOMINATIM), SEARCH_PATH, {
    q: name,
    format: 'jsonv2',
    addressdetails: '1',
    limit: '5',
    'accept-language': 'en',
    countrycodes: countryCode?.toLowerCase(),
  });
  const results = await http.getJson(NOMINATIM, url, searchSchema, {
    deadline,
    timeoutMs: GEOCODER_TIMEOUT_MS,
  });
  const [first, ...rest] = results.map(toPlace);
  if (!first) {
    throw new AppError(
      'not_found',
      `No place called "${query}" was found; check the spelling or add the country, e.g. "Paris, FR".`,
      { source: NOMINATIM.id },
    );
  }
  return { source: NOMINATIM.id, data: { place: { ...first }, others: rest.map((place) => ({ ...place })) } };
}

export const NOMINATIM_PROVIDER: ProviderDescriptor = {
  id: NOMINATIM.id,
  serves: { geocoding: fetchNominatimPlaces },
  urls: { nominatim: { variable: 'AC_NOMINATIM_URL', default: 'https://nominatim.openstreetmap.org' } },
  // The policy's "one request a second" with room to spare, and never two at once.
  perMinute: 50,
  burst: 1,
};
