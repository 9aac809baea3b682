/**
 * Weather from MET Norway's Locationforecast 2.0 (keyless; the Norwegian Meteorological Institute, global
 * coverage): coordinates from the geocoding chain (Open-Meteo's geocoder, then Nominatim), then `/weatherapi/locationforecast/2.0/compact`
 * for them, normalised into the same weather `data` contract as Open-Meteo and wttr.in. It runs on other
 * hosts than Open-Meteo's, and finds its places without Open-Meteo too, so weather keeps answering while
 * Open-Meteo is down or out of tokens.
 *
 * Its terms: an identifying User-Agent (the HTTP client sends the service's on every call; without one the
 * answer is 403), at most 4 decimals in coordinates, at most 20 requests/s per application. Its
 * If-Modified-Since/Expires caching is left to the service's own cache of results.
 */
import { z } from 'zod';
import type { LiveResult } from '../core/live-port.js';
import { describeAlternatives, describePlace } from './geocoding.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import type { ProviderDescriptor, ProviderTools } from './provider-descriptor.js';
import { cleanText } from './text.js';
import { describeWeatherCode } from './wmo-codes.js';

export const MET_NORWAY: Upstream = { id: 'met-norway', name: 'MET Norway', kind: 'weather' };

export const MET_NORWAY_PROVIDER: ProviderDescriptor = {
  id: MET_NORWAY.id,
  serves: { weather: fetchMetNorwayWeather },
  urls: { metNorway: { variable: 'AC_MET_NORWAY_URL', default: 'https://api.met.no' } },
  // Far below the published 20/s: one instance's share of a free public service.
  perMinute: 60,
};

export const LOCATIONFORECAST_PATH = '/weatherapi/locationforecast/2.0/compact';

const timestamp = z.iso.datetime({ offset: true });
const summary = z.object({ summary: z.object({ symbol_code: z.string().min(1) }) }).optional();
const stepSchema = z.object({
  time: timestamp,
  data: z.object({
    instant: z.object({
      details: z.object({
        air_temperature: z.number(),
        relative_humidity: z.number().nullish(),
        /** Metres per second. */
        wind_speed: z.number().nullish(),
      }),
    }),
    next_1_hours: summary,
    next_6_hours: summary,
    next_12_hours: summary,
  }),
});

/** A GeoJSON Feature whose `timeseries` starts at the current hour. */
const compactSchema = z.object({
  type: z.literal('Feature'),
  properties: z.object({
    meta: z.object({ updated_at: timestamp }),
    timeseries: z.tuple([stepSchema], stepSchema),
  }),
});

/**
 * MET symbols (without `_day`/`_night`/`_polartwilight`) in the words Open-Meteo's WMO codes use: a number is
 * the WMO code whose text fits; a string is for what the documented WMO codes have no text for (sleet).
 * Thunder (`…andthunder`) is handled apart.
 */
const SYMBOL_CONDITIONS: Readonly<Record<string, number | string>> = {
  clearsky: 0,
  fair: 1,
  partlycloudy: 2,
  cloudy: 3,
  fog: 45,
  lightrain: 61,
  rain: 63,
  heavyrain: 65,
  lightrainshowers: 80,
  rainshowers: 81,
  heavyrainshowers: 82,
  lightsnow: 71,
  snow: 73,
  heavysnow: 75,
  lightsnowshowers: 85,
  snowshowers: 'Moderate snow showers',
  heavysnowshowers: 86,
  lightsleet: 'Slight sleet',
  sleet: 'Moderate sleet',
  heavysleet: 'Heavy sleet',
  lightsleetshowers: 'Slight sleet showers',
  sleetshowers: 'Moderate sleet showers',
  heavysleetshowers: 'Heavy sleet showers',
};

/** A MET symbol code ("partlycloudy_day", "heavyrainandthunder") as condition text, e.g. "Partly cloudy". */
export function describeSymbol(symbolCode: string): string {
  const symbol = symbolCode.replace(/_(day|night|polartwilight)$/, '');
  // WMO 95 ("Slight or moderate thunderstorm"); heavy ones fall in WMO 97's group, "Thunderstorm".
  if (symbol.endsWith('andthunder')) return describeWeatherCode(symbol.startsWith('heavy') ? 97 : 95);
  const known = SYMBOL_CONDITIONS[symbol];
  if (typeof known === 'number') return describeWeatherCode(known);
  return known ?? `Unknown weather (MET symbol ${cleanText(symbol)})`;
}

/** At most 4 decimals, as MET Norway asks (it refuses more, and they defeat its caching). */
export function coordinate(value: number): string {
  return String(Math.round(value * 10_000) / 10_000);
}

export async function fetchMetNorwayWeather(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline: number,
  tools: ProviderTools,
): Promise<LiveResult> {
  const { place, others } = await tools.geocode(query, deadline);

  const url = buildUrl(baseUrl(config, 'metNorway', MET_NORWAY), LOCATIONFORECAST_PATH, {
    lat: coordinate(place.latitude),
    lon: coordinate(place.longitude),
    // Whole metres; MET corrects the model's temperature for the real height when it is given.
    altitude: typeof place.elevation === 'number' ? String(Math.round(place.elevation)) : undefined,
  });
  const body = await http.getJson(MET_NORWAY, url, compactSchema, { deadline });
  const [now] = body.properties.timeseries;
  const { details } = now.data.instant;
  const symbol = (now.data.next_1_hours ?? now.data.next_6_hours ?? now.data.next_12_hours)?.summary
    .symbol_code;
  const observedAt = new Date(now.time).toISOString();

  return {
    source: MET_NORWAY.id,
    asOf: observedAt,
    data: {
      location: describePlace(place),
      temperature_c: details.air_temperature,
      // Locationforecast has no apparent temperature.
      feels_like_c: null,
      humidity_pct: details.relative_humidity ?? null,
      wind_kph: typeof details.wind_speed === 'number' ? Math.round(details.wind_speed * 36) / 10 : null,
      condition: symbol ? describeSymbol(symbol) : 'Unknown',
      // MET symbols are not WMO codes (the text above is the nearest WMO wording): not passed on.
      condition_code: null,
      observed_at: observedAt,
      alternatives: describeAlternatives(others),
    },
  };
}
