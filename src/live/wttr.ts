/**
 * Weather from wttr.in (keyless, volunteer-run): `/{city}?format=j1`, whose values are all strings, normalised
 * into the same weather `data` contract as Open-Meteo. Its outages arrive as HTTP 200 with the text
 * "Unknown location; please try ~lat,lon" (not JSON) or as JSON without current conditions: both are
 * `upstream_failed`, so the chain tries the next provider and nothing is cached.
 */
import { z } from 'zod';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import type { ProviderDescriptor } from './provider-descriptor.js';
import { cleanText } from './text.js';

export const WTTR: Upstream = { id: 'wttr', name: 'wttr.in', kind: 'weather' };

export const WTTR_PROVIDER: ProviderDescriptor = {
  id: WTTR.id,
  serves: { weather: fetchWttrWeather },
  urls: { wttr: { variable: 'AC_WTTR_URL', default: 'https://wttr.in' } },
  perMinute: 20,
};

/** wttr.in numbers are strings: "7", "-2", "48.867". */
const decimal = z
  .string()
  .trim()
  .regex(/^-?\d+(\.\d+)?$/)
  .transform(Number);
const texts = z.array(z.object({ value: z.string() }));
const clock = z.string().regex(/^\d{1,2}:\d{2} [AP]M$/i);

const conditionSchema = z.object({
  temp_C: decimal,
  FeelsLikeC: decimal.optional(),
  humidity: decimal.optional(),
  windspeedKmph: decimal.optional(),
  weatherDesc: texts.min(1),
  /** Local time of the station, without a zone: "2026-11-21 07:15 AM". */
  localObsDateTime: z.string().regex(/^\d{4}-\d{2}-\d{2} \d{1,2}:\d{2} [AP]M$/i),
  /** The same moment in UTC, without a date: "06:15 AM". */
  observation_time: clock,
});

const areaSchema = z.object({
  areaName: texts.min(1),
  country: texts.optional(),
  region: texts.optional(),
  latitude: decimal,
  longitude: decimal,
});

const j1Schema = z.object({
  current_condition: z.tuple([conditionSchema], conditionSchema),
  nearest_area: z.tuple([areaSchema], areaSchema),
});

/** "07:15 PM" → minutes after midnight (12:xx AM is 0:xx). */
function minutesOfDay(time: string): number {
  const [, hours = '0', minutes = '0', half = 'AM'] = /^(\d{1,2}):(\d{2}) ([AP]M)$/i.exec(time) ?? [];
  return ((Number(hours) % 12) + (half.toUpperCase() === 'PM' ? 12 : 0)) * 60 + Number(minutes);
}

/**
 * The observation as ISO 8601 UTC: `observation_time` (UTC, no date) on the day before, of, or after the
 * local date of `localObsDateTime`, whichever gives the UTC offset nearest the longitude's solar offset
 * (longitude / 15 h). Real zones differ from that by a few hours at most, the candidates by 24 h, so this
 * stays right around midnight, where the local date and the UTC date differ.
 */
export function observedAtUtc(localObsDateTime: string, observationTime: string, longitude: number): string {
  const [date = '', ...time] = localObsDateTime.split(' ');
  const localAsUtc = Date.parse(`${date}T00:00:00Z`) + minutesOfDay(time.join(' ')) * 60_000;
  const utcOnLocalDate = Date.parse(`${date}T00:00:00Z`) + minutesOfDay(observationTime) * 60_000;
  const solarOffset = (longitude / 15) * 3_600_000;
  const day = 86_400_000;
  const candidates = [utcOnLocalDate - day, utcOnLocalDate, utcOnLocalDate + day];
  const distance = (at: number) => Math.abs(localAsUtc - at - solarOffset);
  const best = candidates.reduce((a, b) => (distance(b) < distance(a) ? b : a));
  return new Date(best).toISOString();
}

function firstText(values: { value: string }[] | undefined): string | null {
  const text = values?.[0]?.value ? cleanText(values[0].value) : '';
  return text || null;
}

export async function fetchWttrWeather(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<LiveResult> {
  const url = buildUrl(baseUrl(config, 'wttr', WTTR), `/${encodeURIComponent(query.trim())}`, {
    format: 'j1',
  });
  const body = await http.getJson(WTTR, url, j1Schema, { deadline });
  const [current] = body.current_condition;
  const [area] = body.nearest_area;
  const observedAt = observedAtUtc(current.localObsDateTime, current.observation_time, area.longitude);

  return {
    source: WTTR.id,
    asOf: observedAt,
    data: {
      location: {
        name: firstText(area.areaName) ?? query.trim(),
        admin1: firstText(area.region),
        country: firstText(area.country),
        country_code: null,
        latitude: area.latitude,
        longitude: area.longitude,
        timezone: null,
      },
      temperature_c: current.temp_C,
      feels_like_c: current.FeelsLikeC ?? null,
      humidity_pct: current.humidity ?? null,
      wind_kph: current.windspeedKmph ?? null,
      condition: firstText(current.weatherDesc) ?? 'Unknown',
      // wttr.in codes are WorldWeatherOnline codes, not WMO: not passed on.
      condition_code: null,
      observed_at: observedAt,
      alternatives: [],
    },
  };
}
