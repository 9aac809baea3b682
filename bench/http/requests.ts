/**
 * The requests of each HTTP scenario, for autocannon (load.ts): each made afresh per request for a random agent
 * (its key in a header), so that a load spreads over many agents and keys.
 */
import type { AutocannonRequest } from 'autocannon';
import { type BenchAgent, memoryKeyOf, memoryValue } from '../shared/prefill.js';
import { pick } from '../shared/random.js';
import { CACHED_MINUTES, WEATHER_QUERIES, weatherQueryBody } from './weather-cache.js';

export const JSON_HEADERS = { 'content-type': 'application/json' };

/** POSTs to `path` as a random agent of `agents` (its key in X-API-Key), each with the JSON `body` made for it. */
function postsAsRandomAgent(
  agents: readonly BenchAgent[],
  path: string,
  body: (agent: BenchAgent) => string,
): AutocannonRequest[] {
  return [
    {
      method: 'POST',
      path,
      setupRequest: (request) => {
        const agent = pick(agents);
        request.headers = { ...JSON_HEADERS, 'x-api-key': agent.key };
        request.body = body(agent);
        return request;
      },
    },
  ];
}

/**
 * memory_store: alternately a new key and an update of an existing key, each for a random agent. New keys
 * carry a run id so that repeated runs against one store never collide.
 */
export function memoryStoreRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  const runId = Math.random().toString(36).slice(2, 8);
  let counter = 0;
  return postsAsRandomAgent(agents, '/api/ac/memory', (agent) => {
    const n = counter++;
    const memoryKey =
      n % 2 === 0
        ? `bench.new.${runId}.${n}`
        : pick(agent.memoryKeys.length ? agent.memoryKeys : [memoryKeyOf(0)]);
    return JSON.stringify({
      agent_key: agent.key,
      memory_key: memoryKey,
      memory_value: memoryValue(`${runId}.${n}`),
      memory_type: 'context',
    });
  });
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
  return postsAsRandomAgent(agents, '/api/ac/memory/search', (agent) =>
    JSON.stringify({ agent_key: agent.key, limit: SEARCH_LIMIT }),
  );
}

/** Data served from the cache: one of the primed weather queries, for a random agent. */
export function cachedDataRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  return postsAsRandomAgent(agents, '/api/ac/data', (agent) =>
    weatherQueryBody(agent, pick(WEATHER_QUERIES), CACHED_MINUTES),
  );
}

/**
 * The ceilings get exactly the requests of the scenarios they are compared with (the same generator: a random
 * agent, its key in a header, a fresh JSON body or query string), so that the load generator, which shares
 * the two cores with the server, does the same work per request on both sides of a ratio. The bare app
 * answers them without any work (bench/ceilings/bare-express.ts).
 */
export function barePostRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  return memoryStoreRequests(agents);
}

export function bareGetRequests(agents: readonly BenchAgent[]): AutocannonRequest[] {
  return memoryRetrieveRequests(agents);
}
