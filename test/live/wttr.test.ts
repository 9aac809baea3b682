import { describe, expect, it } from 'vitest';
import type { LiveConfig } from '../../src/live/live-config.js';
import { httpClientFor } from '../../src/live/live-data-source.js';
import { fetchWttrWeather, observedAtUtc } from '../../src/live/wttr.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { WTTR_PARIS, wttrAt } from '../fixtures/live/wttr.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('weather (wttr.in)', () => {
  const wttr = useFakeUpstream({
    routes: {
      '/Paris': { json: WTTR_PARIS },
    },
  });

  const fetch = (query = 'Paris', extra: Partial<LiveConfig> = {}, deadline?: number) => {
    const config = liveConfig({ wttr: `${wttr.url}/ignored?x=1` }, extra);
    return fetchWttrWeather(httpClientFor(config), config, query, deadline);
  };

  it('converts the string values and normalises to the Open-Meteo weather contract', async () => {
    expect(await fetch()).toEqual({
      source: 'wttr',
      asOf: '2026-11-21T06:15:00.000Z',
      data: {
        location: {
          name: 'Paris',
          admin1: 'Ile-de-France',
          country: 'France',
          country_code: null,
          latitude: 48.867,
          longitude: 2.333,
          timezone: null,
        },
        temperature_c: 7,
        feels_like_c: 5,
        humidity_pct: 87,
        wind_kph: 11,
        condition: 'Overcast',
        condition_code: null,
        observed_at: '2026-11-21T06:15:00.000Z',
        alternatives: [],
      },
    });
  });

  it('calls /{city}?format=j1 with the city URL-encoded and the User-Agent', async () => {
    wttr.route('/New%20York%2C%20US', { json: WTTR_PARIS });
    await fetch('  New York, US ');
    const [request] = wttr.requests;
    expect(request?.rawUrl).toBe('/New%20York%2C%20US?format=j1');
    expect(request?.query).toEqual({ format: 'j1' });
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
    expect(request?.headers.accept).toBe('application/json');
  });

  it('reads negative and decimal strings and tolerates missing optional values', async () => {
    const [current] = WTTR_PARIS.current_condition;
    wttr.route('/Paris', {
      json: {
        ...WTTR_PARIS,
        current_condition: [{ ...current, temp_C: '-3', FeelsLikeC: undefined, humidity: '45.5' }],
      },
    });
    expect((await fetch()).data).toMatchObject({ temperature_c: -3, feels_like_c: null, humidity_pct: 45.5 });
  });

  it('treats "Unknown location" with status 200 as a failure, not data', async () => {
    wttr.route('/Atlantis', {
      text: 'Unknown location; please try ~48.8566,2.3522',
      contentType: 'application/json',
    });
    const err = await appErrorOf(fetch('Atlantis'));
    expect(err.code).toBe('upstream_failed');
    expect(err.details).toEqual({ source: 'wttr' });
    expect(err.message).toBe(
      'The weather upstream (wttr.in) answered with something that is not JSON; nothing was charged, try again later.',
    );
  });

  it('treats JSON without current_condition or nearest_area, or with them empty, as a failure', async () => {
    const bodies = [
      { data: { error: [{ msg: 'Unable to find any matching weather location to the query submitted!' }] } },
      { ...WTTR_PARIS, current_condition: [] },
      { current_condition: WTTR_PARIS.current_condition },
      { ...WTTR_PARIS, nearest_area: [] },
      wttrAt('yesterday', '06:15 AM', '2.333'),
      { ...WTTR_PARIS, current_condition: [{ ...WTTR_PARIS.current_condition[0], temp_C: 'N/A' }] },
    ];
    for (const json of bodies) {
      wttr.route('/Paris', { json });
      const err = await appErrorOf(fetch());
      expect(err.code).toBe('upstream_failed');
      expect(err.message).toContain('unexpected format');
    }
  });

  it('fails on an HTML page, 500, 503 and 429 with Retry-After', async () => {
    wttr.route('/Paris', { text: '<!DOCTYPE html><html><body>wttr.in is down</body></html>' });
    expect((await appErrorOf(fetch())).code).toBe('upstream_failed');

    wttr.route('/Paris', { status: 500, text: 'Internal Server Error', contentType: 'text/plain' });
    const before = wttr.requests.length;
    const failed = await appErrorOf(fetch());
    expect(failed.details).toEqual({ source: 'wttr', upstream_status: 500 });
    expect(wttr.requests.length - before).toBe(3);

    wttr.route('/Paris', { status: 503, text: 'This query is already being processed' });
    expect((await appErrorOf(fetch())).details.upstream_status).toBe(503);

    wttr.route('/Paris', { status: 429, headers: { 'retry-after': '30' }, text: 'Too many queries' });
    const limited = await appErrorOf(fetch());
    expect(limited.details).toEqual({ source: 'wttr', upstream_status: 429, retry_after_s: 30 });
    expect(limited.message).toContain('try again in 30 s');
  });

  it('fails on truncated JSON and a refused connection', async () => {
    wttr.route('/Paris', { text: '{"current_condition": [{"temp_C": "7"', contentType: 'application/json' });
    expect((await appErrorOf(fetch())).message).toContain('not JSON');
    const config = liveConfig({ wttr: await closedPortUrl() });
    const refused = await appErrorOf(fetchWttrWeather(httpClientFor(config), config, 'Paris'));
    expect(refused.code).toBe('upstream_failed');
    expect(refused.details.network_error).toBe(true);
  });

  it('stops at the deadline it is given', async () => {
    wttr.route('/Paris', { json: WTTR_PARIS, delayMs: 1000 });
    const started = Date.now();
    const err = await appErrorOf(fetch('Paris', {}, Date.now() + 250));
    expect(Date.now() - started).toBeLessThan(800);
    expect(err.code).toBe('upstream_timeout');
  });
});

describe('observedAtUtc', () => {
  it.each([
    ['Paris morning', '2026-11-21 07:15 AM', '06:15 AM', 2.333, '2026-11-21T06:15:00.000Z'],
    ['Paris after local midnight', '2026-11-22 12:30 AM', '11:30 PM', 2.35, '2026-11-21T23:30:00.000Z'],
    ['Auckland (UTC+13)', '2026-11-21 10:00 AM', '09:00 PM', 174.77, '2026-11-20T21:00:00.000Z'],
    ['Honolulu (UTC-10)', '2026-11-21 08:00 PM', '06:00 AM', -157.86, '2026-11-22T06:00:00.000Z'],
    ['Kolkata (UTC+5:30)', '2026-11-21 12:05 PM', '06:35 AM', 88.36, '2026-11-21T06:35:00.000Z'],
    ['noon and midnight in 12 h clock', '2026-11-21 12:00 PM', '12:00 PM', 0, '2026-11-21T12:00:00.000Z'],
  ])('%s', (_name, local, utc, longitude, expected) => {
    expect(observedAtUtc(local, utc, longitude)).toBe(expected);
  });
});
