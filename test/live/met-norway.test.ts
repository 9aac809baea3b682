import { describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { coordinate, describeSymbol } from '../../src/live/met-norway.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { MET_NORWAY_PARIS, MET_NORWAY_PATH } from '../fixtures/live/met-norway.js';
import { GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('weather (MET Norway)', () => {
  const geo = useFakeUpstream({ routes: { '/v1/search': { json: GEOCODING_PARIS } } });
  const met = useFakeUpstream({ routes: { [MET_NORWAY_PATH]: { json: MET_NORWAY_PARIS } } });

  const source = (extra = {}) =>
    createLiveDataSource(
      liveConfig(
        { openMeteoGeocoding: geo.url, metNorway: `${met.url}/ignored/path?x=1` },
        { providers: { weather: ['met-norway'] }, ...extra },
      ),
    );

  it('geocodes with Open-Meteo, reads the current hour and normalises it', async () => {
    const result = await source().fetch('weather', 'paris, fr');
    expect(result).toEqual({
      source: 'met-norway',
      asOf: '2026-11-21T06:00:00.000Z',
      data: {
        location: {
          name: 'Paris',
          admin1: 'Île-de-France',
          country: 'France',
          country_code: 'FR',
          latitude: 48.85341,
          longitude: 2.3488,
          timezone: 'Europe/Paris',
        },
        temperature_c: 7.1,
        feels_like_c: null,
        humidity_pct: 88.3,
        wind_kph: 11.2,
        condition: 'Partly cloudy',
        condition_code: null,
        observed_at: '2026-11-21T06:00:00.000Z',
        alternatives: [{ name: 'Paris', admin1: 'Texas', country: 'United States' }],
      },
    });
  });

  it('calls the documented path with 4-decimal coordinates, the altitude and the User-Agent', async () => {
    await source().fetch('weather', 'paris, fr');
    expect(geo.requests).toHaveLength(1);
    expect(geo.requests[0]?.query).toMatchObject({ name: 'paris', countryCode: 'FR' });
    expect(met.requests).toHaveLength(1);
    const [m] = met.requests;
    expect(m?.path).toBe(MET_NORWAY_PATH);
    expect(m?.query).toEqual({ lat: '48.8534', lon: '2.3488', altitude: '42' });
    // MET Norway answers 403 to a request without an identifying User-Agent.
    expect(m?.headers['user-agent']).toBe(USER_AGENT);
    expect(m?.headers.accept).toBe('application/json');
  });

  it('answers 403 in the fake when the User-Agent is missing, and the provider never triggers it', async () => {
    met.route(MET_NORWAY_PATH, (request) =>
      request.headers['user-agent'] ? { json: MET_NORWAY_PARIS } : { status: 403, text: 'Forbidden' },
    );
    expect((await source().fetch('weather', 'paris')).source).toBe('met-norway');
  });

  it('falls back to the 6- or 12-hour symbol, and says Unknown without one', async () => {
    const [first] = MET_NORWAY_PARIS.properties.timeseries;
    const without = (keys: string[]) => ({
      ...MET_NORWAY_PARIS,
      properties: {
        ...MET_NORWAY_PARIS.properties,
        timeseries: [
          {
            ...first,
            data: Object.fromEntries(
              Object.entries(first?.data ?? {}).filter(([key]) => !keys.includes(key)),
            ),
          },
        ],
      },
    });
    met.route(MET_NORWAY_PATH, { json: without(['next_1_hours']) });
    expect((await source().fetch('weather', 'paris')).data.condition).toBe('Slight rain');
    met.route(MET_NORWAY_PATH, { json: without(['next_1_hours', 'next_6_hours', 'next_12_hours']) });
    expect((await source().fetch('weather', 'paris')).data.condition).toBe('Unknown');
  });

  it('is not_found when the geocoder knows no such place, without calling MET Norway', async () => {
    geo.route('/v1/search', { json: { generationtime_ms: 0.3 } });
    const err = await appErrorOf(source().fetch('weather', 'atlantis'));
    expect(err.code).toBe('not_found');
    expect(met.requests).toHaveLength(0);
  });

  it('fails on HTTP 500', async () => {
    met.route(MET_NORWAY_PATH, { status: 500, text: 'Internal Server Error', contentType: 'text/plain' });
    const err = await appErrorOf(source().fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toBe(
      'The weather upstream (MET Norway) answered with HTTP 500; nothing was charged, try again later.',
    );
    expect(err.details).toEqual({ source: 'met-norway', upstream_status: 500 });
  });

  it('fails on a 403 without retrying', async () => {
    met.route(MET_NORWAY_PATH, { status: 403, text: 'Forbidden', contentType: 'text/plain' });
    const err = await appErrorOf(source().fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.details.upstream_status).toBe(403);
    expect(met.requests).toHaveLength(1);
  });

  it('fails on a body that is not JSON or not the documented shape', async () => {
    met.route(MET_NORWAY_PATH, { text: '<!doctype html><html><body>Maintenance</body></html>' });
    const html = await appErrorOf(source().fetch('weather', 'paris'));
    expect(html.code).toBe('upstream_failed');
    expect(html.message).toContain('not JSON');
    met.route(MET_NORWAY_PATH, {
      json: { type: 'Feature', properties: { meta: { updated_at: '2026-11-21T05:48:12Z' }, timeseries: [] } },
    });
    const empty = await appErrorOf(source().fetch('weather', 'paris'));
    expect(empty.code).toBe('upstream_failed');
    expect(empty.message).toContain('unexpected format');
    met.route(MET_NORWAY_PATH, { json: { type: 'Feature', properties: { timeseries: [{ time: 'now' }] } } });
    expect((await appErrorOf(source().fetch('weather', 'paris'))).code).toBe('upstream_failed');
  });

  it('times out after timeoutMs', async () => {
    met.route(MET_NORWAY_PATH, { json: MET_NORWAY_PARIS, delayMs: 1000 });
    const started = Date.now();
    const err = await appErrorOf(source({ timeoutMs: 200 }).fetch('weather', 'paris'));
    expect(Date.now() - started).toBeLessThan(900);
    expect(err.code).toBe('upstream_timeout');
    expect(err.details).toEqual({ source: 'met-norway' });
  });

  it('fails when the connection is refused', async () => {
    const closed = await closedPortUrl();
    const refused = createLiveDataSource(
      liveConfig(
        { openMeteoGeocoding: geo.url, metNorway: closed },
        { providers: { weather: ['met-norway'] } },
      ),
    );
    const err = await appErrorOf(refused.fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toBe(
      'The weather upstream (MET Norway) could not be reached; nothing was charged, try again later.',
    );
  });
});

describe('MET Norway helpers', () => {
  it('words symbols as the WMO codes do', () => {
    expect(describeSymbol('clearsky_day')).toBe('Clear sky');
    expect(describeSymbol('fair_polartwilight')).toBe('Mainly clear');
    expect(describeSymbol('cloudy')).toBe('Overcast');
    expect(describeSymbol('fog')).toBe('Fog');
    expect(describeSymbol('heavyrain')).toBe('Heavy rain');
    expect(describeSymbol('lightsnowshowers_night')).toBe('Slight snow showers');
    expect(describeSymbol('sleet')).toBe('Moderate sleet');
    expect(describeSymbol('rainandthunder')).toBe('Slight or moderate thunderstorm');
    expect(describeSymbol('lightssleetshowersandthunder_day')).toBe('Slight or moderate thunderstorm');
    expect(describeSymbol('heavysnowandthunder')).toBe('Thunderstorm');
    expect(describeSymbol('mystery')).toBe('Unknown weather (MET symbol mystery)');
  });

  it('rounds coordinates to at most 4 decimals', () => {
    expect(coordinate(48.85341)).toBe('48.8534');
    expect(coordinate(-95.55551)).toBe('-95.5555');
    expect(coordinate(2.3488)).toBe('2.3488');
    expect(coordinate(10)).toBe('10');
  });
});
