/**
 * Weather from Open-Meteo (keyless): the place's coordinates from the geocoding chain (Open-Meteo's own
 * geocoder in geocoding.ts, then Nominatim), as MET Norway gets them, then the `current` model data for
 * them, normalised into the documented weather `data` contract.
 */
import { z } from 'zod';
import type { LiveResult } from '../core/live-port.js';
import {
  describeAlternatives,
  describePlace,
  fetchOpenMeteoPlaces,
  GEOCODING_URL_KEY,
  OPEN_METEO,
} from './geocoding.js';
import { buildUrl, type HttpClient } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import type { ProviderDescriptor, ProviderTools } from './provider-descriptor.js';
import { describeWeatherCode } from './wmo-codes.js';

export { OPEN_METEO, parsePlaceQuery } from './geocoding.js';

export const OPEN_METEO_PROVIDER: ProviderDescriptor = {
  id: OPEN_METEO.id,
  // Its geocoder is the geocoding chain's first member; its forecast asks that chain, as MET Norway does.
  serves: { weather: fetchWeather, geocoding: fetchOpenMeteoPlaces },
  urls: {
    [GEOCODING_URL_KEY]: {
      variable: 'AC_OPEN_METEO_GEOCODING_URL',
      default: 'https://geocoding-api.open-meteo.com',
    },
    openMeteoForecast: { variable: 'AC_OPEN_METEO_FORECAST_URL', default: 'https://api.open-meteo.com' },
  },
  perMinute: 300,
};

const CURRENT_FIELDS = 'temperature_2m,relative_humidity_2m,apparent_temperature,weather_code,wind_speed_10m';

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

/** Open-Meteo local time ("2026-11-21T06:15", GMT when no timezone is asked) → ISO 8601 UTC. */
export function toIsoUtc(localTime: string, utcOffsetSeconds = 0): string {
  const withSeconds = localTime.length === 16 ? `${localTime}:00` : localTime;
  return new Date(Date.parse(`${withSeconds}Z`) - utcOffsetSeconds * 1000).toISOString();
}

export async function fetchWeather(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline: number,
  tools: ProviderTools,
): Promise<LiveResult> {
  const { place, others } = await tools.geocode(query, deadline);

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
      alternatives: describeAlternatives(others),
    },
  };
}
