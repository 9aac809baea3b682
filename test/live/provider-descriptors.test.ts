/**
 * The provider list is the single source: every descriptor's variables are parsed by the configuration
 * (and documented), each chain's default order is the list's, and AC_*_PROVIDERS accept exactly the ids
 * of their kind. A provider added to the list needs no other edit for any of this to hold.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, PROVIDER_VARIABLES, UPSTREAM_URL_VARIABLES } from '../../src/config.js';
import { createChains } from '../../src/live/live-data-source.js';
import { CHAIN_KINDS, type PriceKind, rateOf } from '../../src/live/provider-descriptor.js';
import { PROVIDERS } from '../../src/live/provider-list.js';
import { PROVIDER_IDS } from '../../src/live/providers.js';
import { liveConfig } from './helpers.js';

const ORDER_VARIABLES = {
  weather: 'AC_WEATHER_PROVIDERS',
  price: 'AC_PRICE_PROVIDERS',
  news: 'AC_NEWS_PROVIDERS',
  search: 'AC_SEARCH_PROVIDERS',
  geocoding: 'AC_GEOCODING_PROVIDERS',
} as const;

const urlSettings = PROVIDERS.flatMap((provider) =>
  Object.entries(provider.urls).map(([key, url]) => ({ provider, key, ...url })),
);
const keyed = PROVIDERS.flatMap((provider) => (provider.apiKey ? [{ provider, ...provider.apiKey }] : []));

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('the provider descriptors', () => {
  it('have unique ids, URL keys and variables, serve something, and have a rate', () => {
    const ids = PROVIDERS.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const keys = urlSettings.map((u) => u.key);
    expect(new Set(keys).size).toBe(keys.length);
    const variables = [...urlSettings.map((u) => u.variable), ...keyed.map((k) => k.variable)];
    expect(new Set(variables).size).toBe(variables.length);
    for (const variable of variables) expect(variable).toMatch(/^AC_[A-Z0-9_]+_(URL|API_KEY)$/);
    expect([...PROVIDER_VARIABLES].sort()).toEqual([...variables].sort());
    for (const provider of PROVIDERS) {
      expect(Object.keys(provider.serves).length, provider.id).toBeGreaterThan(0);
      expect(provider.serves.price?.kinds.length ?? 1, provider.id).toBeGreaterThan(0);
      expect(Object.keys(provider.urls).length, provider.id).toBeGreaterThan(0);
      expect(provider.perMinute, provider.id).toBeGreaterThan(0);
    }
    for (const { variable, default: url } of urlSettings) {
      if (url !== undefined) expect(new URL(url).origin, variable).toBe(url);
    }
  });

  it('divide each rate among AC_INSTANCES, so that N instances together stay within a provider’s limit', () => {
    expect(loadConfig({}).live.instances).toBe(1);
    const three = loadConfig({ AC_INSTANCES: '3' }).live;
    expect(three.instances).toBe(3);
    for (const provider of PROVIDERS) {
      expect(rateOf(provider, three) * 3, provider.id).toBeCloseTo(rateOf(provider, loadConfig({}).live), 9);
    }
    const coingecko = PROVIDERS.find((p) => p.id === 'coingecko');
    if (coingecko?.perMinuteWithKey === undefined) throw new Error('coingecko has a keyed rate');
    const keyed = loadConfig({ AC_INSTANCES: '2', AC_COINGECKO_API_KEY: 'k' }).live;
    expect(rateOf(coingecko, keyed)).toBe(coingecko.perMinuteWithKey / 2);
    expect(configError({ AC_INSTANCES: '0' })).toContain('AC_INSTANCES');
  });

  it('every base URL variable is parsed into its key: default, override (origin only), refusal', () => {
    const defaults = loadConfig({}).live.urls;
    for (const { key, variable, default: url } of urlSettings) {
      expect(defaults[key], variable).toBe(url);
      const set = loadConfig({ [variable]: 'http://127.0.0.1:4321/some/path?x=1' }).live.urls;
      expect(set[key], variable).toBe('http://127.0.0.1:4321');
      expect(configError({ [variable]: 'ftp://x' })).toContain(`${variable}="ftp://x"`);
    }
    expect(UPSTREAM_URL_VARIABLES).toEqual(
      Object.fromEntries(urlSettings.filter((u) => u.default !== undefined).map((u) => [u.key, u.variable])),
    );
  });

  it("every API key variable is parsed into the provider's key; empty is unset", () => {
    for (const { provider, variable } of keyed) {
      expect(loadConfig({ [variable]: 'k-123' }).live.apiKeys?.[provider.id], variable).toBe('k-123');
      expect(loadConfig({ [variable]: '' }).live.apiKeys?.[provider.id], variable).toBeUndefined();
    }
  });

  it('AC_*_PROVIDERS accept exactly the ids of their kind, named in list order when refused', () => {
    for (const kind of CHAIN_KINDS) {
      const ids = PROVIDERS.filter((p) => p.serves[kind]).map((p) => p.id);
      const variable = ORDER_VARIABLES[kind];
      expect(loadConfig({ [variable]: [...ids].reverse().join(',') }).live.providers?.[kind]).toEqual(
        [...ids].reverse(),
      );
      expect(configError({ [variable]: 'no-such-provider' })).toContain(
        `each provider must be one of ${ids.join(', ')}`,
      );
      const other = PROVIDERS.find((p) => !p.serves[kind]);
      if (other) expect(configError({ [variable]: other.id })).toContain(variable);
    }
  });

  it("each chain's default order is the list's order, every provider joining once its key or URL is set", () => {
    const everything = liveConfig(Object.fromEntries(urlSettings.map((u) => [u.key, 'http://127.0.0.1:9'])), {
      providers: undefined,
      apiKeys: Object.fromEntries(keyed.map((k) => [k.provider.id, 'k'])),
    });
    const chains = createChains(everything);
    for (const kind of ['weather', 'news', 'search', 'geocoding'] as const) {
      const ids = PROVIDERS.filter((p) => p.serves[kind]).map((p) => p.id);
      expect(PROVIDER_IDS[kind]).toEqual(ids);
      expect(chains[kind].providerIds).toEqual(ids);
    }
    expect(PROVIDER_IDS.price).toEqual(PROVIDERS.filter((p) => p.serves.price).map((p) => p.id));
    const kinds = new Set(PROVIDERS.flatMap((p) => p.serves.price?.kinds ?? []));
    expect([...chains.prices.keys()].sort()).toEqual([...kinds].sort());
    for (const kind of kinds) {
      const ids = PROVIDERS.filter((p) => p.serves.price?.kinds.includes(kind as PriceKind)).map((p) => p.id);
      expect(chains.prices.get(kind)?.providerIds, kind).toEqual(ids);
    }
  });

  it('a provider that needs a key or a URL joins no chain without it', () => {
    const bare = createChains(liveConfig({}, { providers: undefined }));
    const joined = new Set(
      [bare.weather, bare.news, bare.search, bare.geocoding, ...bare.prices.values()].flatMap(
        (c) => c.providerIds,
      ),
    );
    for (const provider of PROVIDERS) {
      const conditional =
        provider.apiKey?.requiredToJoin || Object.values(provider.urls).some((u) => u.default === undefined);
      expect(joined.has(provider.id), provider.id).toBe(!conditional);
    }
  });

  it('docs/configuration.md names every variable, its default URL, and each chain’s default order', async () => {
    const doc = await readFile('docs/configuration.md', 'utf8');
    const row = (variable: string) => doc.split('\n').find((line) => line.startsWith(`| \`${variable}\``));
    for (const { variable, default: url } of urlSettings) {
      expect(row(variable), variable).toBeDefined();
      if (url !== undefined) expect(row(variable), variable).toContain(`\`${url}\``);
    }
    for (const { variable } of keyed) expect(row(variable), variable).toBeDefined();
    for (const kind of CHAIN_KINDS) {
      expect(row(ORDER_VARIABLES[kind]), kind).toContain(`\`${PROVIDER_IDS[kind].join(',')}\``);
    }
  });
});
