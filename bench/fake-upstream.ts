/**
 * A tiny fake Open-Meteo on loopback for the cached-data scenario: `/v1/search` (geocoding) and
 * `/v1/forecast` in the documented shapes (copied from test/live/fixtures/open-meteo.ts), so that the
 * cache can be primed without the internet. Every place it is asked for exists.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const PLACE = {
  id: 2988507,
  name: 'Paris',
  latitude: 48.85341,
  longitude: 2.3488,
  elevation: 42,
  feature_code: 'PPLC',
  country_code: 'FR',
  admin1_id: 3012874,
  timezone: 'Europe/Paris',
  population: 2138551,
  country_id: 3017382,
  country: 'France',
  admin1: 'Île-de-France',
};

function forecast() {
  const now = new Date();
  now.setUTCSeconds(0, 0);
  return {
    latitude: 48.86,
    longitude: 2.3399997,
    generationtime_ms: 0.05,
    utc_offset_seconds: 0,
    timezone: 'GMT',
    timezone_abbreviation: 'GMT',
    elevation: 43,
    current_units: {
      time: 'iso8601',
      interval: 'seconds',
      temperature_2m: '°C',
      relative_humidity_2m: '%',
      apparent_temperature: '°C',
      weather_code: 'wmo code',
      wind_speed_10m: 'km/h',
    },
    current: {
      time: now.toISOString().slice(0, 16),
      interval: 900,
      temperature_2m: 7.4,
      relative_humidity_2m: 87,
      apparent_temperature: 4.9,
      weather_code: 3,
      wind_speed_10m: 11.2,
    },
  };
}

export interface FakeOpenMeteo {
  url: string;
  /** Requests answered so far. */
  requests: () => number;
  close: () => Promise<void>;
}

export async function startFakeOpenMeteo(): Promise<FakeOpenMeteo> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    let body: unknown;
    if (url.pathname === '/v1/search') {
      const name = url.searchParams.get('name') ?? 'Paris';
      const countryCode = url.searchParams.get('countryCode') ?? PLACE.country_code;
      body = { results: [{ ...PLACE, name, country_code: countryCode }], generationtime_ms: 0.6 };
    } else if (url.pathname === '/v1/forecast') {
      body = forecast();
    } else {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":true,"reason":"not found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
