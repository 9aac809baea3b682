/**
 * Weather from Open-Meteo (keyless): geocode the place name, then read the `current` model data for its
 * coordinates, and normalise both into the documented weather `data` contract.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import type { ProviderDescriptor } from './provider-descriptor.js';
import { cleanText } from './text.js';
import { describeWeatherCode } from './wmo-codes.js';

export const OPEN_METEO: Upstream = { id: 'open-meteo', name: 'Open-Meteo', kind: 'weather' };

export const OPEN_METEO_PROVIDER: ProviderDescriptor = {
  id: OPEN_METEO.id,
  serves: { weather: fetchWeather },
  urls: {
    openMeteoGeocoding: {
      variable: 'AC_OPEN_METEO_GEOCODING_URL',
      default: 'https://geocoding-api.open-meteo.com',
    },
    openMeteoForecast: { variable: 'AC_OPEN_METEO_FORECAST_URL', default: 'https://api.open-meteo.com' },
  },
  perMinute: 300,
};

const CURRENT_FIELDS = 'temperature_2m,relative_humidity_2m,apparent_temperature,weather_code,wind_speed_10m';

const placeSchema = z.object({
  name: z.string(),
  latitude: z.number(),
  longitude: z.number(),
  country: z.string().nullish(),
  country_code: z.string().nullish(),
  admin1: z.string().nullish(),
  timezone: z.string().nullish(),
});
type Place = z.infer<typeof placeSchema>;

/** No match: the `results` key is missing. */
const geocodingSchema = z.object({ results: z.array(placeSchema).optional() });

const nullableNumber = z.number().nullish();
const forecastSchema = z.object({
  utc_offset_seconds: z.number().optional(),
  current: z.object({
    time: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/),
    temperature_2m: z.number(),
    relative_humidity_2m: nullableNumber,
    apparent_temperature: nullableNumber,
    weather_code: z.number().int(),
    wind_speed_10m: nullableNumber,
  }),
});

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

/** Open-Meteo local time ("2026-11-21T06:15", GMT when no timezone is asked) → ISO 8601 UTC. */
export function toIsoUtc(localTime: string, utcOffsetSeconds = 0): string {
  const withSeconds = localTime.length === 16 ? `${localTime}:00` : localTime;
  return new Date(Date.parse(`${withSeconds}Z`) - utcOffsetSeconds * 1000).toISOString();
}

function placeText(value: string | null | undefined): string | null {
  return value ? cleanText(value) : null;
}

export async function fetchWeather(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<LiveResult> {
  const { name, countryCode } = parsePlaceQuery(query);
  const geocodingUrl = buildUrl(baseUrl(config, 'openMeteoGeocoding', OPEN_METEO), '/v1/search', {
    name,
    count: '5',
    language: 'en',
    format: 'json',
    countryCode,
  });
  const geocoding = await http.getJson(OPEN_METEO, geocodingUrl, geocodingSchema, { deadline });
  const [place, ...others] = geocoding.results ?? [];
  if (!place) {
    throw new AppError(
      'not_found',
      `No place called "${query}" was found; check the spelling or add the country, e.g. "Paris, FR".`,
      { source: OPEN_METEO.id },
    );
  }

  const forecastUrl = buildUrl(baseUrl(config, 'openMeteoForecast', OPEN_METEO), '/v1/forecast', {
    latitude: String(place.latitude),
    longitude: String(place.longitude),
    current: CURRENT_FIELDS,
  });
  const { current, utc_offset_seconds } = await http.getJson(OPEN_METEO, forecastUrl, forecastSchema, {
    deadline,
  });
  const observedAt = toIsoUtc(current.time, utc_offset_seconds);

  return {
    source: OPEN_METEO.id,
    asOf: observedAt,
    data: {
      location: describePlace(place),
      temperature_c: current.temperature_2m,
      feels_like_c: current.apparent_temperature ?? null,
      humidity_pct: current.relative_humidity_2m ?? null,
      wind_kph: current.wind_speed_10m ?? null,
      condition: describeWeatherCode(current.weather_code),
      condition_code: current.weather_code,
      observed_at: observedAt,
      alternatives: others.map((other) => ({
        name: cleanText(other.name),
        admin1: placeText(other.admin1),
        country: placeText(other.country),
      })),
    },
  };
}

function describePlace(place: Place) {
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
