/**
 * The discovery documents: ping, the OpenAPI document, llms.txt and the plugin manifest. Each is declared
 * once here, like an operation, and ping's `agent_api` map is generated from the operation table plus
 * these declarations.
 */
import { z } from 'zod';
import { PRICES, SERVICE_NAME, SERVICE_VERSION } from '../core/pricing.js';
import { PING_PATH } from '../server-paths.js';
import {
  AUTH_DESCRIPTION,
  agentFacing,
  type DocumentRoute,
  type Readiness,
  WEB_PAGES,
} from './document-context.js';
import { buildLlmsTxt } from './llms-txt.js';
import { buildOpenApi } from './openapi.js';

export { type DocumentContext, type DocumentRoute, type Readiness, readinessOf } from './document-context.js';

export const PingOutput = z.object({
  status: z.literal('ok'),
  service: z.string(),
  version: z.string(),
  timestamp: z.iso.datetime(),
  agent_api: z.record(z.string(), z.object({ method: z.string(), path: z.string() })),
  pricing: z.object({
    memory_op_cents: z.int(),
    live_data_cents: z.int(),
    cached_data_cents: z.int(),
    free_credits_on_signup_cents: z.int(),
  }),
  auth: z.string(),
  admin_api: z.boolean().describe('Whether the operator endpoints (and the console operator view) are on.'),
});

export const ReadyOutput = z.object({
  ready: z.boolean(),
  status: z.enum(['ready', 'shutting_down', 'store_failed', 'store_unreachable', 'store_closed']),
  timestamp: z.iso.datetime(),
  error: z.string().optional().describe('When not ready: what is wrong and what to do.'),
  retry_after_s: z.int().optional(),
});

const NOT_READY: Record<Exclude<Readiness, 'ready'>, { error: string; retryAfterS: number }> = {
  shutting_down: {
    error:
      'This instance is shutting down and takes no new work; retry on another instance or after a restart.',
    retryAfterS: 5,
  },
  store_failed: {
    error: 'The store could not write to disk and refuses work until the service is restarted.',
    retryAfterS: 30,
  },
  store_unreachable: {
    error:
      'The database cannot be reached; this instance answers 503 until it can, then takes work again by ' +
      'itself: retry shortly.',
    retryAfterS: 5,
  },
  store_closed: { error: 'The store is closed: the service is stopping.', retryAfterS: 5 },
};

export const DOCUMENTS: readonly DocumentRoute[] = [
  {
    name: 'ping',
    path: PING_PATH,
    summary: 'Health, version, pricing and the map of operations. Free, no key.',
    output: PingOutput,
    render: ({ operations, documents, adminApi }): z.input<typeof PingOutput> => {
      const agentApi: Record<string, { method: string; path: string }> = {};
      for (const doc of documents) agentApi[doc.name] = { method: 'GET', path: doc.path };
      for (const page of WEB_PAGES) agentApi[page.name] = { method: 'GET', path: page.path };
      for (const op of agentFacing(operations))
        agentApi[op.name] = { method: op.http.method, path: op.http.path };
      return {
        status: 'ok',
        service: SERVICE_NAME,
        version: SERVICE_VERSION,
        timestamp: new Date().toISOString(),
        agent_api: agentApi,
        pricing: {
          memory_op_cents: PRICES.memoryOp,
          live_data_cents: PRICES.liveDataFresh,
          cached_data_cents: PRICES.liveDataCached,
          free_credits_on_signup_cents: PRICES.starterCredit,
        },
        auth: AUTH_DESCRIPTION,
        admin_api: adminApi,
      };
    },
  },
  {
    name: 'ready',
    path: '/api/ac/ready',
    summary:
      'Readiness for load balancers: 200 {"ready": true} when the store is loaded and taking work; 503 with ' +
      'Retry-After while shutting down, after a store failure or while the database cannot be reached. Free, no key.',
    output: ReadyOutput,
    render: async ({ readiness }): Promise<z.input<typeof ReadyOutput>> => {
      const status = await readiness();
      const timestamp = new Date().toISOString();
      if (status === 'ready') return { ready: true, status, timestamp };
      const { error, retryAfterS } = NOT_READY[status];
      return { ready: false, status, timestamp, error, retry_after_s: retryAfterS };
    },
    respond: (body) => {
      const { ready, retry_after_s: retryAfter } = body as z.output<typeof ReadyOutput>;
      return ready ? { status: 200 } : { status: 503, headers: { 'Retry-After': String(retryAfter ?? 5) } };
    },
    otherStatuses: {
      '503':
        'Not ready (shutting down, the store failed, or its database cannot be reached): see status, error and the Retry-After header.',
    },
  },
  {
    name: 'openapi',
    path: '/api/ac/openapi.json',
    summary: 'This API as an OpenAPI 3.1 document.',
    output: z.record(z.string(), z.unknown()),
    render: (ctx) => buildOpenApi(ctx),
  },
  {
    name: 'llms_txt',
    path: '/api/ac/llms.txt',
    summary: 'This API described in plain text for language models.',
    output: 'text',
    render: (ctx) => buildLlmsTxt(ctx),
  },
  {
    name: 'ai_plugin',
    path: '/.well-known/ai-plugin.json',
    summary: 'The plugin manifest (schema v1).',
    output: z.record(z.string(), z.unknown()),
    render: ({ baseUrl }) => ({
      schema_version: 'v1',
      name_for_human: 'Agent Context',
      name_for_model: 'agent_context',
      description_for_human: 'Persistent memory and live data (news, search, weather, prices) for AI agents.',
      description_for_model:
        'Store and recall named text memories across sessions, and fetch live news, web search results, ' +
        'current weather and asset prices. Pay per call in cents from a prepaid balance; register for a key ' +
        `with ${PRICES.starterCredit} cents of starter credit. Read /api/ac/llms.txt for the operations.`,
      auth: { type: 'user_http', authorization_type: 'bearer' },
      api: { type: 'openapi', url: `${baseUrl}/api/ac/openapi.json`, is_user_authenticated: false },
      version: SERVICE_VERSION,
    }),
  },
];
