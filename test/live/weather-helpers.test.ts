import { describe, expect, it } from 'vitest';
import { parsePlaceQuery, toIsoUtc } from '../../src/live/open-meteo.js';
import { describeWeatherCode } from '../../src/live/wmo-codes.js';

describe('weather helpers', () => {
  it('splits a two-letter country suffix only', () => {
    expect(parsePlaceQuery('paris, fr')).toEqual({ name: 'paris', countryCode: 'FR' });
    expect(parsePlaceQuery('springfield, il, us')).toEqual({ name: 'springfield, il', countryCode: 'US' });
    expect(parsePlaceQuery('paris, france')).toEqual({ name: 'paris, france' });
    expect(parsePlaceQuery(', fr')).toEqual({ name: ', fr' });
    expect(parsePlaceQuery('tokyo')).toEqual({ name: 'tokyo' });
  });

  it('turns Open-Meteo local time into ISO UTC', () => {
    expect(toIsoUtc('2026-11-21T06:15')).toBe('2026-11-21T06:15:00.000Z');
    expect(toIsoUtc('2026-11-21T07:15', 3600)).toBe('2026-11-21T06:15:00.000Z');
  });

  it('describes every WMO code 0–99', () => {
    expect(describeWeatherCode(0)).toBe('Clear sky');
    expect(describeWeatherCode(45)).toBe('Fog');
    expect(describeWeatherCode(65)).toBe('Heavy rain');
    expect(describeWeatherCode(99)).toBe('Thunderstorm with heavy hail');
    expect(describeWeatherCode(52)).toBe('Drizzle');
    for (let code = 0; code <= 99; code++) expect(describeWeatherCode(code)).not.toMatch(/Unknown/);
    expect(describeWeatherCode(100)).toBe('Unknown weather (WMO code 100)');
  });
});
