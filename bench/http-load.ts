/**
 * HTTP load with autocannon (in this process; the servers run in their own processes): one scenario at a
 * time, a short warm-up, then `seconds` at `connections`. Requests can vary per request through
 * `setupRequest` (body, path and X-API-Key), so load spreads over many agents and keys.
 */
import autocannon, { type AutocannonRequest, type AutocannonResult } from 'autocannon';
import type { BenchAgent } from './prefill.js';
import { memoryKeyOf, memoryValue } from './prefill.js';

export interface LoadSettings {
  seconds: number;
  warmupSeconds: number;
  connections: number;
}

export interface HttpResult {
  scenario: string;
  /** Memories in the store (undefined for the bare Express ceiling). */
  memories?: number;
  /** For the ceiling: the store size whose scenarios it was measured right before (ratios pair them). */
  ceilingFor?: number;
  /** Which round (1..BENCH_ROUNDS): a ratio pairs a scenario with the ceiling of the same round. */
  round: number;
  /** 2xx responses per second over the measured window: the throughput that counts. */
  opsPerSec: number;
  /** Every response per second (autocannon's "Req/Sec" average), errors included. */
  reqPerSecAll: number;
  /** Latency of 2xx responses, ms (autocannon records only those). */
  p50: number;
  p99: number;
  max: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  seconds: number;
  /**
   * A load split over several instances (loadParallel): each instance's own ops/s, p50 and p99, in instance
   * order. The result's ops/s and counts are their sums, its latencies the largest of theirs.
   */
  instances?: { url: string; connections: number; opsPerSec: number; p50: number; p99: number }[];
  /**
   * Processor time per 2xx response, µs, where measured (run.ts `withCpu`): of the server's processes, and of
   * the database's. The processes' time over the whole load (its warm-up included) over its wall time, divided
   * by the ops/s of the measured window.
   */
  cpu?: { serverUs: number; databaseUs?: number };
}

export async function load(
  scenario: string,
  url: string,
  requests: AutocannonRequest[],
  settings: LoadSettings,
  tags: { memories?: number; ceilingFor?: number; round: number },
): Promise<HttpResult> {
  const result: AutocannonResult = await autocannon({
    url,
    connections: settings.connections,
    duration: settings.seconds,
    requests,
    ...(settings.warmupSeconds > 0
      ? { warmup: { connections: settings.connections, duration: settings.warmupSeconds } }
      : {}),
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {}))
    statusCodes[code] = Number(count);
  const seconds = (result.finish.getTime() - result.start.getTime()) / 1000 || result.duration;
  const ok = result['2xx'];
  return {
    scenario,
    ...tags,
    opsPerSec: ok / seconds,
    reqPerSecAll: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    seconds,
  };
}

/**
 * One scenario against several instances at once: one autocannon load per instance, all started together
 * (in this process, as `load`), `settings.connections` split between them (25 each of 50 for two). The
 * result's throughput, requests and failures are the sums of the instances'; its p50, p99 and max are the
 * largest of theirs (latency histograms cannot be merged from autocannon's summaries, and the larger
 * instance's figure is the one a client may meet). Each instance's figures are kept in `instances`.
 */
export async function loadParallel(
  scenario: string,
  targets: readonly { url: string; requests: AutocannonRequest[] }[],
  settings: LoadSettings,
  tags: { memories?: number; ceilingFor?: number; round: number },
): Promise<HttpResult> {
  const connectionsOf = (i: number) =>
    Math.floor(settings.connections / targets.length) + (i < settings.connections % targets.length ? 1 : 0);
  const parts = await Promise.all(
    targets.map((target, i) =>
      load(scenario, target.url, target.requests, { ...settings, connections: connectionsOf(i) }, tags),
    ),
  );
  const sum = (pick: (r: HttpResult) => number) => parts.reduce((n, r) => n + pick(r), 0);
  const most = (pick: (r: HttpResult) => number) => Math.max(...parts.map(pick));
  const statusCodes: Record<string, number> = {};
  for (const part of parts)
    for (const [code, n] of Object.entries(part.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + n;
  return {
    scenario,
    ...tags,
    opsPerSec: sum((r) => r.opsPerSec),
    reqPerSecAll: sum((r) => r.reqPerSecAll),
    p50: most((r) => r.p50),
    p99: most((r) => r.p99),
    max: most((r) => r.max),
    requests: sum((r) => r.requests),
    ok: sum((r) => r.ok),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    statusCodes,
    seconds: most((r) => r.seconds),
    instances: parts.map((r, i) => ({
      url: targets[i]?.url ?? '',
      connections: connectionsOf(i),
      opsPerSec: r.opsPerSec,
      p50: r.p50,
      p99: r.p99,
    })),
  };
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}

/**
 * memory_store: alternately a new key and an update of an existing key, each for a random agent. New keys
 * carry a run id so that repeated runs against one store never collide.
 */
export function memoryStoreRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  const runId = Math.random().toString(36).slice(2, 8);
  let counter = 0;
  return [
    {
      method: 'POST',
      path: '/api/ac/memory',
      setupRequest: (request) => {
        const n = counter++;
        const agent = pick(agents);
        const memoryKey =
          n % 2 === 0
            ? `bench.new.${runId}.${n}`
            : pick(agent.memoryKeys.length ? agent.memoryKeys : [memoryKeyOf(0)]);
        request.headers = { ...JSON_HEADERS, 'x-api-key': agent.key };
        request.body = JSON.stringify({
          agent_key: agent.key,
          memory_key: memoryKey,
          memory_value: memoryValue(`${runId}.${n}`),
          memory_type: 'context',
        });
        return request;
      },
    },
  ];
}

/** memory_retrieve: a random existing memory of a random agent (prefilled keys are never deleted). */
export function memoryRetrieveRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  const withMemories = agents.filter((agent) => agent.memoryKeys.length > 0);
  return [
    {
      method: 'GET',
      setupRequest: (request) => {
        const agent = pick(withMemories);
        request.headers = { 'x-api-key': agent.key };
        request.path =
          `/api/ac/memory?agent_key=${encodeURIComponent(agent.key)}` +
          `&memory_key=${encodeURIComponent(pick(agent.memoryKeys))}`;
        return request;
      },
    },
  ];
}

/** The MCP protocol eras /mcp serves, as the bench names them. */
export const MCP_ERAS = ['2025-11-25', '2026-07-28'] as const;
export type McpRevision = (typeof MCP_ERAS)[number];

/**
 * memory_retrieve as an MCP tool call over HTTP (`POST /mcp`), in one era: a 2025 client's tools/call after
 * its initialize (stateless: no session, each POST on its own), or a 2026-07-28 one with its `_meta` envelope
 * and `Mcp-Method`/`Mcp-Name` headers. A random existing memory of a random agent, as memoryRetrieveRequests.
 */
export function mcpRetrieveRequests(
  agents: readonly BenchAgent[],
  revision: McpRevision,
): AutocannonRequest[] {
  const withMemories = agents.filter((agent) => agent.memoryKeys.length > 0);
  const modern = revision === '2026-07-28';
  let id = 0;
  return [
    {
      method: 'POST',
      path: '/mcp',
      setupRequest: (request) => {
        const agent = pick(withMemories);
        request.headers = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-api-key': agent.key,
          'mcp-protocol-version': revision,
          ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'memory_retrieve' } : {}),
        };
        request.body = JSON.stringify({
          jsonrpc: '2.0',
          id: ++id,
          method: 'tools/call',
          params: {
            name: 'memory_retrieve',
            arguments: { memory_key: pick(agent.memoryKeys) },
            ...(modern
              ? {
                  _meta: {
                    'io.modelcontextprotocol/protocolVersion': revision,
                    'io.modelcontextprotocol/clientCapabilities': {},
                    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
                  },
                }
              : {}),
          },
        });
        return request;
      },
    },
  ];
}

export const SEARCH_LIMIT = 10;

/** memory_search: the newest SEARCH_LIMIT memories of a random agent. */
export function memorySearchRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  return [
    {
      method: 'POST',
      path: '/api/ac/memory/search',
      setupRequest: (request) => {
        const agent = pick(agents);
        request.headers = { ...JSON_HEADERS, 'x-api-key': agent.key };
        request.body = JSON.stringify({ agent_key: agent.key, limit: SEARCH_LIMIT });
        return request;
      },
    },
  ];
}

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

/** Data served from the cache: one of the primed weather queries, for a random agent. */
export function cachedDataRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  return [
    {
      method: 'POST',
      path: '/api/ac/data',
      setupRequest: (request) => {
        const agent = pick(agents);
        request.headers = { ...JSON_HEADERS, 'x-api-key': agent.key };
        request.body = JSON.stringify({
          agent_key: agent.key,
          query_type: 'weather',
          query: pick(WEATHER_QUERIES),
          cache_minutes: CACHED_MINUTES,
        });
        return request;
      },
    },
  ];
}

/** Fetches each weather query once (fresh, from the fake upstream) so that the load is served from cache. */
export async function primeWeatherCache(baseUrl: string, agent: BenchAgent): Promise<void> {
  for (const query of WEATHER_QUERIES) {
    const response = await fetch(`${baseUrl}/api/ac/data`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-api-key': agent.key },
      body: JSON.stringify({ agent_key: agent.key, query_type: 'weather', query, cache_minutes: 0 }),
    });
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
    const response = await fetch(`${baseUrl}/api/ac/data`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-api-key': agent.key },
      body: JSON.stringify({
        agent_key: agent.key,
        query_type: 'weather',
        query,
        cache_minutes: CACHED_MINUTES,
      }),
    });
    const body = (await response.json().catch(() => undefined)) as { from_cache?: boolean } | undefined;
    if (response.status === 200 && body?.from_cache === true) hits++;
    else misses.push(`"${query}": ${response.status} ${JSON.stringify(body)}`);
  }
  return { hits, misses };
}

/** A ~224-byte JSON body, like a memory_store request, for the bare POST route. */
/**
 * The ceilings get exactly the requests of the scenarios they are compared with (the same generator: a random
 * agent, its key in a header, a fresh JSON body or query string), so that the load generator, which shares
 * the two cores with the server, does the same work per request on both sides of a ratio. The bare app
 * answers them without any work (bench/bare-express.ts).
 */
export function barePostRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  return memoryStoreRequests(agents);
}

export function bareGetRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  return memoryRetrieveRequests(agents);
}
