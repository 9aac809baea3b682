/**
 * A tiny fake Open-Meteo on loopback for the cached-data scenario: `/v1/search` (geocoding) and
 * `/v1/forecast` in the documented shapes (the test fixtures of test/fixtures/live/open-meteo.ts), so that the
 * cache can be primed without the internet. Every place it is asked for exists.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FORECAST_PARIS, GEOCODING_PARIS } from '../../test/fixtures/live/open-meteo.js';

const PLACE = GEOCODING_PARIS.results[0] as (typeof GEOCODING_PARIS.results)[number];

/** The test fixture's forecast, observed now, so that it reads as current data. */
function forecast() {
  const now = new Date();
  now.setUTCSeconds(0, 0);
  return { ...FORECAST_PARIS, current: { ...FORECAST_PARIS.current, time: now.toISOString().slice(0, 16) } };
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
