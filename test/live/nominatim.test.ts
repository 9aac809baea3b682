/**
 * Nominatim as the geocoding chain's second member (issue 14): MET Norway finds its coordinates there when
 * Open-Meteo's geocoder is down, in the same `location` words; places are kept, and Nominatim's one call a
 * second is a wait of the weather chain, not a failure.
 */
import { describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { toPlace } from '../../src/live/nominatim.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { MET_NORWAY_PARIS, MET_NORWAY_PATH } from '../fixtures/live/met-norway.js';
import { NOMINATIM_PARIS, NOMINATIM_PATH } from '../fixtures/live/nominatim.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('geocoding for MET Norway: Open-Meteo, then Nominatim', () => {
  const geo = useFakeUpstream({ routes: { '/v1/search': { status: 500, text: 'down' } } });
  const osm = useFakeUpstream({ routes: { [NOMINATIM_PATH]: { json: NOMINATIM_PARIS } } });
  const met = useFakeUpstream({ routes: { [MET_NORWAY_PATH]: { json: MET_NORWAY_PARIS } } });

  const source = (geocoding = ['open-meteo', 'nominatim'], options = {}) =>
    createLiveDataSource(
      liveConfig(
        { openMeteoGeocoding: geo.url, nominatim: osm.url, metNorway: met.url },
        { providers: { weather: ['met-norway'], geocoding } },
      ),
      options,
    );

  it("with Open-Meteo's geocoder down, MET Norway answers with Nominatim's place, in the same words", async () => {
    const result = await source().fetch('weather', 'paris, fr');
    expect(result.source).toBe('met-norway');
    expect(result.data.location).toEqual({
      name: 'Paris',
      admin1: 'Île-de-France',
      country: 'France',
      country_code: 'FR',
      latitude: 48.8534951,
      longitude: 2.3483915,
      timezone: null,
    });
    expect(result.data.alternatives).toEqual([{ name: 'Paris', admin1: 'Texas', country: 'United States' }]);
    expect(met.requests[0]?.query).toEqual({ lat: '48.8535', lon: '2.3484' });
    expect(geo.requests.length).toBeGreaterThan(0);
  });

  it('asks the documented path with the country code, in English, with the User-Agent', async () => {
    await source(['nominatim']).fetch('weather', 'paris, fr');
    expect(osm.requests).toHaveLength(1);
    const [request] = osm.requests;
    expect(request?.path).toBe(NOMINATIM_PATH);
    expect(request?.query).toEqual({
      q: 'paris',
      format: 'jsonv2',
      addressdetails: '1',
      limit: '5',
      'accept-language': 'en',
      countrycodes: 'fr',
    });
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
  });

  it('keeps a geocoded place: the same city again asks no geocoder', async () => {
    const weather = source(['nominatim']);
    await weather.fetch('weather', 'paris');
    await weather.fetch('weather', 'paris');
    expect(osm.requests).toHaveLength(1);
    expect(met.requests).toHaveLength(2);
  });

  it('no place anywhere is not_found, without calling MET Norway', async () => {
    osm.route(NOMINATIM_PATH, { json: [] });
    const err = await appErrorOf(source().fetch('weather', 'atlantis'));
    expect(err.code).toBe('not_found');
    expect(err.message).toContain('No place called "atlantis"');
    expect(met.requests).toHaveLength(0);
  });

  it('a body not in the documented shape fails, and so does MET Norway without a place', async () => {
    osm.route(NOMINATIM_PATH, { json: [{ lat: 'north', lon: '2.3', display_name: 'Paris' }] });
    const err = await appErrorOf(source(['nominatim']).fetch('weather', 'paris'));
    expect(err.code).toBe('upstream_failed');
    expect(err.details.source).toBe('nominatim');
    expect(met.requests).toHaveLength(0);
  });

  it('one call a second: a second city waits for the next token instead of failing', async () => {
    let now = Date.now(); // the HTTP client measures deadlines by the real clock
    const slept: number[] = [];
    const weather = source(['nominatim'], {
      now: () => now,
      sleep: async (ms: number) => {
        slept.push(ms);
        now += ms;
      },
    });
    expect((await weather.fetch('weather', 'paris')).source).toBe('met-norway');
    expect((await weather.fetch('weather', 'lyon')).source).toBe('met-norway');
    // 50 a minute, no burst: the next token 1.2 s after the first.
    expect(slept).toEqual([1_200]);
    expect(osm.requests.map((r) => r.query.q)).toEqual(['paris', 'lyon']);
    expect(met.requests).toHaveLength(2);
  });

  it('names a place as Nominatim does when it has no `name`: city, town or village, else the display name', () => {
    const base = { lat: 1, lon: 2, display_name: 'Somewhere, Region, Country' };
    expect(toPlace({ ...base, name: null, address: { town: 'Townsville' } }).name).toBe('Townsville');
    expect(toPlace({ ...base, name: '', address: { village: 'Hamlet' } }).name).toBe('Hamlet');
    expect(toPlace({ ...base }).name).toBe('Somewhere');
  });
});
