/**
 * What the discovery documents (discovery.ts) and their generators (openapi.ts, llms-txt.ts) share: the
 * context a document is rendered in, the declaration of a document route, the readiness states, the
 * wording of authentication and which operations an agent sees. Its own module, so that the generators do
 * not import the module that declares them (no import cycle).
 */
import type { z } from 'zod';
import type { RestOperation } from '../core/operation-table.js';
import type { StoreHealth } from '../core/store-port.js';

export interface DocumentContext {
  baseUrl: string;
  operations: readonly RestOperation[];
  documents: readonly DocumentRoute[];
  /** Whether the service can take work now (for the readiness document). */
  readiness: () => Promise<Readiness>;
  /** Whether the operator's endpoints are on (AC_ADMIN_TOKEN is set). */
  adminApi: boolean;
}

/** The pages the service serves for people (src/http/web-routes.ts), listed by ping and llms.txt. */
export const WEB_PAGES = [
  {
    name: 'console',
    path: '/console',
    summary:
      'The web console: sign in with your API key to see balance, usage and the ledger, manage memories ' +
      'and run live-data queries.',
  },
  {
    name: 'api_reference',
    path: '/docs',
    summary: 'This API as a readable reference page, with a try-it panel that uses the console key.',
  },
] as const;

/**
 * `ready`, or why not: shutting down, the store failed (needs a restart), its database cannot be reached
 * (comes back by itself), or it is closed.
 */
export type Readiness = 'ready' | 'shutting_down' | 'store_failed' | 'store_unreachable' | 'store_closed';

const READINESS_OF_HEALTH = {
  ok: 'ready',
  failed: 'store_failed',
  unreachable: 'store_unreachable',
  closed: 'store_closed',
} as const satisfies Record<StoreHealth, Readiness>;

/** The readiness of a service that is or is not draining, over a store in the given health. */
export function readinessOf(draining: boolean, store: StoreHealth): Readiness {
  return draining ? 'shutting_down' : READINESS_OF_HEALTH[store];
}

export interface DocumentRoute {
  name: string;
  path: string;
  summary: string;
  /** JSON documents have an output schema; text documents are served as text/plain. */
  output: z.ZodType | 'text';
  render(ctx: DocumentContext): unknown | Promise<unknown>;
  /** The status and headers of a rendered body, when not always 200 (readiness answers 503 when not ready). */
  respond?(body: unknown): { status: number; headers?: Record<string, string> };
  /** Other statuses it answers with the same body schema (status → description), for OpenAPI. */
  otherStatuses?: Record<string, string>;
}

export const AUTH_DESCRIPTION =
  'Send your API key as "X-API-Key: <API_KEY>" or "Authorization: Bearer <API_KEY>", and repeat it in the ' +
  'agent_key field (body, or query string for GET). Get a key with POST /api/ac/register. Ping and register ' +
  'need no key.';

/** Operations an agent may call (the operator's routes are not advertised in ping). */
export function agentFacing(operations: readonly RestOperation[]): RestOperation[] {
  return operations.filter((op) => op.auth !== 'admin');
}
