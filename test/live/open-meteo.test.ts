import { describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { CURRENT, FORECAST_PARIS, GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('weather (Open-Meteo)', () => {
  const geo = useFakeUpstream({ routes: { '/v1/search': { json: GEOCODING_PARIS } } });
  const forecast = useFakeUpstream({ routes: { '/v1/forecast': { json: FORECAST_PARIS } } });

  const source = (extra = {}) =>
    createLiveDataSource(
      liveConfig(
        { openMeteoGeocoding: `${geo.url}/ignored/path?x=1`, openMeteoForecast: forecast.url },
        extra,
      ),
    );

  it('geocodes, reads current conditions and normalises them', async () => {
    const result = await source().fetch('weather', 'paris, fr');
    expect(result).toEqual({
      source: 'open-meteo',
      asOf: '2026-11-21T06:15:00.000Z',
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
        temperature_c: 7.4,
        feels_like_c: 4.9,
        humidity_pct: 87,
        wind_kph: 11.2,
        condition: 'Overcast',
        condition_code: 3,
        observed_at: '2026-11-21T06:15:00.000Z',
        alternatives: [{ name: 'Paris', admin1: 'Texas', country: 'United States' }],
      },
    });
  });

  it('calls the documented paths on the configured origins with the User-Agent', async () => {
    await source().fetch('weather', 'paris, fr');
    expect(geo.requests).toHaveLength(1);
    const [g] = geo.requests;
    expect(g?.path).toBe('/v1/search');
    expect(g?.query).toEqual({
      name: 'paris',
      count: '5',
      language: 'en',
      format: 'json',
      countryCode: 'FR',
    });
    expect(g?.headers['user-agent']).toBe(USER_AGENT);
    expect(g?.headers.accept).toBe('application/json');
    const [f] = forecast.requests;
    expect(f?.path).toBe('/v1/forecast');
    expect(f?.query).toEqual({ latitude: '48.85341', longitude: '2.3488', current: CURRENT });
    expect(f?.headers['user-agent']).toBe(USER_AGENT);
  });

  it('sends no countryCode without a two-letter suffix and encodes spaces', async () => {
    await source().fetch('weather', 'new york');
    expect(geo.requests[0]?.query.countryCode).toBeUndefined();
    expect(geo.requests[0]?.rawUrl).toContain('name=new%20york');
  });

  it('is not_found when geocoding has no results key or an empty list', async () => {
    geo.route('/v1/search', { json: { generationtime_ms: 0.3 } });
    const err = await appErrorOf(source().fetch('weather', 'atlantis'));
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      'No place called "atlantis" was found; check the spelling or add the country, e.g. "Paris, FR".',
    );
    expect(forecast.requests).toHaveLength(0);
    geo.route('/v1/search', { json: { results: [] } });
    expect((await appErrorOf(source().fetch('weather', 'atlantis'))).code).toBe('not_found');
  });

  it('fails on HTTP 500 from the forecast', async () => {
    forecast.route('/v1/forecast', { status: 500, text: 'Internal Server Error', contentType: 'text/plain' });
    const err = await appErrorOf(source().fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toBe(
      'The weather upstream (Open-Meteo) answered with HTTP 500; nothing was charged, try again later.',
    );
    expect(err.details).toEqual({ source: 'open-meteo', upstream_status: 500 });
  });

  it('fails on the documented 400 error body', async () => {
    forecast.route('/v1/forecast', {
      status: 400,
      json: { error: true, reason: 'Latitude must be in range' },
    });
    const err = await appErrorOf(source().fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.details.upstream_status).toBe(400);
  });

  it('passes Retry-After of a 429 on as retry_after_s', async () => {
    geo.route('/v1/search', { status: 429, headers: { 'retry-after': '42' }, json: { reason: 'limit' } });
    const err = await appErrorOf(source().fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.details).toEqual({ source: 'open-meteo', upstream_status: 429, retry_after_s: 42 });
    expect(err.message).toContain('try again in 42 s');
  });

  it('fails on an HTML body with status 200', async () => {
    geo.route('/v1/search', { text: '<!doctype html><html><body>Maintenance</body></html>' });
    const err = await appErrorOf(source().fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toContain('not JSON');
    expect(err.cause).toBeInstanceOf(SyntaxError);
  });

  it('fails on JSON that does not match the documented shape', async () => {
    forecast.route('/v1/forecast', { json: { current: { time: '2026-11-21T06:15', weather_code: 3 } } });
    const err = await appErrorOf(source().fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toContain('unexpected format');
    geo.route('/v1/search', { json: { results: [{ name: 'Paris', latitude: '48.8' }] } });
    expect((await appErrorOf(source().fetch('weather', 'paris'))).code).toBe('upstream_failed');
  });

  it('times out after timeoutMs', async () => {
    forecast.route('/v1/forecast', { json: FORECAST_PARIS, delayMs: 1000 });
    const started = Date.now();
    const err = await appErrorOf(source({ timeoutMs: 200 }).fetch('weather', 'paris'));
    expect(Date.now() - started).toBeLessThan(900);
    expect(err.code).toBe('upstream_timeout');
    expect(err.message).toBe(
      'The weather upstream (Open-Meteo) did not answer within 0.2 s; nothing was charged, try again later.',
    );
    expect(err.details).toEqual({ source: 'open-meteo' });
    expect(err.cause).toBeDefined();
  });

  it('fails when the connection is refused or dropped', async () => {
    const closed = await closedPortUrl();
    const refused = createLiveDataSource(liveConfig({ openMeteoGeocoding: closed }));
    const err = await appErrorOf(refused.fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toBe(
      'The weather upstream (Open-Meteo) could not be reached; nothing was charged, try again later.',
    );
    forecast.route('/v1/forecast', { destroy: true });
    expect((await appErrorOf(source().fetch('weather', 'paris'))).code).toBe('upstream_failed');
  });
});
