/**
 * The cached-data scenario's weather queries, and the server's cache of them: primed from the fake Open-Meteo
 * before a load, so that the load is served from the cache, and checked to be so.
 */
import type { BenchAgent } from '../shared/prefill.js';

export const WEATHER_QUERIES = [
  'Paris, FR',
  'Berlin',
  'London',
  'Tokyo',
  'New York',
  'Madrid',
  'Rome',
  'Oslo',
  'Lima',
  'Nairobi',
];

export const CACHED_MINUTES = 1440;

/** The body of a weather query of `agent`'s, served from a cache at most `cacheMinutes` old (0: fresh). */
export function weatherQueryBody(agent: BenchAgent, query: string, cacheMinutes: number): string {
  return JSON.stringify({ agent_key: agent.key, query_type: 'weather', query, cache_minutes: cacheMinutes });
}

function askWeather(baseUrl: string, agent: BenchAgent, query: string, cacheMinutes: number) {
  return fetch(`${baseUrl}/api/ac/data`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': agent.key },
    body: weatherQueryBody(agent, query, cacheMinutes),
  });
}

/** Fetches each weather query once (fresh, from the fake upstream) so that the load is served from cache. */
export async function primeWeatherCache(baseUrl: string, agent: BenchAgent): Promise<void> {
  for (const query of WEATHER_QUERIES) {
    const response = await askWeather(baseUrl, agent, query, 0);
    const text = await response.text();
    if (response.status !== 200)
      throw new Error(`priming the cache for "${query}": ${response.status} ${text}`);
  }
  // Check that the load's requests are cache hits.
  const check = await weatherCacheHits(baseUrl, agent, 1);
  if (check.misses.length)
    throw new Error(`the primed weather query was not served from cache: ${check.misses.join('; ')}`);
}

/**
 * Asks for the load's weather queries (the first `count` of them) as the cached-data scenario does, and
 * says which were not cache hits (each with its status and body). Charged as the scenario's requests are.
 */
export async function weatherCacheHits(
  baseUrl: string,
  agent: BenchAgent,
  count = WEATHER_QUERIES.length,
): Promise<{ hits: number; misses: string[] }> {
  let hits = 0;
  const misses: string[] = [];
  for (const query of WEATHER_QUERIES.slice(0, count)) {
    const response = await askWeather(baseUrl, agent, query, CACHED_MINUTES);
    const body = (await response.json().catch(() => undefined)) as { from_cache?: boolean } | undefined;
    if (response.status === 200 && body?.from_cache === true) hits++;
    else misses.push(`"${query}": ${response.status} ${JSON.stringify(body)}`);
  }
  return { hits, misses };
}
