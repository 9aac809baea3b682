/**
 * The live-data operation's entry of the operation table: news, web search, weather and asset prices,
 * charged fresh or served from the shared cache. Its schemas are in live-data.schemas.ts.
 */
import type { Limits } from '../limits.js';
import { chargedOperation, READS } from '../operation-kit.js';
import { PRICES } from '../pricing.js';
import type { LiveDataSchemas } from './live-data.schemas.js';

export function liveDataOperations(schemas: LiveDataSchemas, limits: Limits) {
  return [
    chargedOperation({
      name: 'data',
      mcp: { tool: 'data_fetch', hints: { ...READS, idempotentHint: false, openWorldHint: true } },
      title: 'Fetch live data',
      http: { method: 'POST', path: '/api/ac/data' },
      cost: { cents: PRICES.liveDataFresh, cachedCents: PRICES.liveDataCached },
      summary: 'Fetch news, web search results, current weather or an asset price.',
      description:
        'Fetches live data for query: query_type news (latest articles), search (web results), weather (a city) ' +
        'or price (a coin or an ISO currency code, optionally "in eur"). Served from the shared cache, at the ' +
        'cached price, when its result is at most cache_minutes old ' +
        `(default ${limits.cacheMinutesDefault}, 0-${limits.cacheMinutesMax}; 0 always fetches fresh; ` +
        '-1 means cached only: a cached result of any age, or 404 not_cached, free, never fetching). ' +
        'cache_state says how the answer was served: fresh, hit, stale or shared_flight. ' +
        '404 not_found: no such city or asset, check the spelling. ' +
        '502/504: the upstream failed or timed out; nothing was charged, retry later.',
      errors: [
        'insufficient_credits',
        'daily_limit_reached',
        'not_found',
        'not_cached',
        'forbidden',
        'upstream_failed',
        'upstream_timeout',
        'max_cost_exceeded',
      ],
      input: schemas.DataInput,
      output: schemas.DataOutput,
      run: (core, agent, input, ctx) => core.liveData.fetchData(agent, input, ctx),
    }),
  ] as const;
}
