/**
 * The MCP face of the operation table: one tool per entry that names an MCP tool (tools.ts), with the
 * entry's description, schemas and hints; the account and the memories as resources; one prompt; logging for
 * the requests that ask for it. One server is built per HTTP request and per stdio connection, for the
 * protocol era that request or connection speaks (the SDK's entries say which); both eras get the same tools,
 * resources, prompt, descriptions and answers. The transport only says which API key the caller presented;
 * every call authenticates it, so a tool never runs for an unknown key.
 */

import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Core } from '../core/core.js';
import type { Operation } from '../core/operation-table.js';
import { PRICES, SERVICE_NAME, SERVICE_VERSION } from '../core/pricing.js';
import type { Logger } from '../logger.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { CACHE_HINTS } from './cache-hints.js';
import type { McpEra, McpExtra } from './mcp-extra.js';
import { installLogging } from './mcp-log.js';
import { registerMemoryResources } from './resources.js';
import { registerTools } from './tools.js';

export type { McpEra, McpExtra };

/** Which API key the caller presented: from the HTTP headers, or the stdio server's own key. */
export type KeyOf = (extra: McpExtra) => string | undefined;

export interface McpServerDeps {
  core: Core;
  operations: readonly Operation[];
  logger: Logger;
  keyOf: KeyOf;
  /** The agent the transport has already authenticated for this request, if it has (HTTP does, once). */
  knownAgent?: (extra: McpExtra) => string | undefined;
  /** The OAuth client whose access token the request carried, named in the ledger entry of a charge. */
  spenderOf?: (extra: McpExtra) => string | undefined;
  /** Where each tool call is counted (the service's metrics). */
  metrics?: Pick<ServiceMetrics, 'request'>;
}

export const MCP_INSTRUCTIONS =
  'agent-context keeps named text memories for you across sessions and fetches live data (news, web search, ' +
  'weather, asset prices). Each call costs a few cents from your balance (account_info is free and shows it). ' +
  'Store what you will need later with memory_store, find it with memory_search and memory_retrieve. ' +
  'Failures come back as JSON {error, code}: read error, it says what to do.';

const RecallArgs = z.object({ topic: z.string().describe('What the task is about.') });

export function createMcpServer(deps: McpServerDeps, era: McpEra = 'legacy'): McpServer {
  const { core, logger } = deps;
  const server = new McpServer(
    { name: SERVICE_NAME, version: SERVICE_VERSION, title: 'Agent Context: memory and live data' },
    {
      capabilities: { logging: {} },
      instructions: MCP_INSTRUCTIONS,
      cacheHints: CACHE_HINTS,
      // Only a 2026-07-28 client is asked to confirm (confirmation.ts): no request is pushed to a 2025 one.
      inputRequired: { legacyShim: false },
    },
  );
  const agentOf = async (extra: McpExtra) =>
    deps.knownAgent?.(extra) ?? (await core.accounts.authenticate(deps.keyOf(extra))).id;
  const metrics = deps.metrics ? { metrics: deps.metrics } : {};
  const log = installLogging(server, era);
  const spenderOf = (extra: McpExtra) => deps.spenderOf?.(extra);
  registerTools(server, { core, operations: deps.operations, logger, agentOf, spenderOf, log, ...metrics });
  registerMemoryResources(server, {
    core,
    operations: deps.operations,
    logger,
    agentOf,
    spenderOf,
    era,
    ...metrics,
  });

  server.registerPrompt(
    'recall',
    {
      title: 'Recall what you know',
      description: `Start a task by loading your stored memories about a topic (costs ${PRICES.memoryOp} cent per tool call).`,
      argsSchema: RecallArgs,
    },
    ({ topic }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Before working on "${topic}", call memory_search to list what you have stored, ` +
              'memory_retrieve the entries that look relevant, and use them. When you learn something worth ' +
              'keeping, save it with memory_store under a short descriptive memory_key.',
          },
        },
      ],
    }),
  );
  // The lists come from the operation table, which cannot change while the process runs: no list_changed
  // notification will ever come, so none is advertised (a 2026-07-28 client would otherwise hold a
  // subscriptions/listen stream open for nothing).
  server.server.registerCapabilities(UNCHANGING_LISTS);
  return server;
}

const UNCHANGING_LISTS = {
  tools: { listChanged: false },
  resources: { listChanged: false },
  prompts: { listChanged: false },
};
