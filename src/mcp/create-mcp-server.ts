/**
 * The MCP face of the operation table: one tool per entry that names an MCP tool, with the entry's
 * description, schemas and hints; the account and the memories as resources; one prompt; the logging
 * capability. The transport only says which API key the caller presented; every call authenticates it,
 * so a tool never runs for an unknown key.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Core } from '../core/core.js';
import { parseIdempotencyKey } from '../core/idempotency.js';
import { costSentence, type Operation } from '../core/operations.js';
import { PRICES, SERVICE_NAME, SERVICE_VERSION } from '../core/pricing.js';
import { runOperation } from '../core/run-operation.js';
import { fieldsOf, parseInput } from '../core/validation.js';
import type { Logger } from '../logger.js';
import type { McpExtra } from './mcp-extra.js';
import { registerMemoryResources } from './resources.js';
import { mcpError, toolFailure, toolSuccess } from './tool-results.js';

export type { McpExtra };

/** Which API key the caller presented: from the HTTP headers, or the stdio server's own key. */
export type KeyOf = (extra: McpExtra) => string | undefined;

export interface McpServerDeps {
  core: Core;
  operations: readonly Operation[];
  logger: Logger;
  keyOf: KeyOf;
}

export const MCP_INSTRUCTIONS =
  'agent-context keeps named text memories for you across sessions and fetches live data (news, web search, ' +
  'weather, asset prices). Each call costs a few cents from your balance (account_info is free and shows it). ' +
  'Store what you will need later with memory_store, find it with memory_search and memory_retrieve. ' +
  'Failures come back as JSON {error, code}: read error, it says what to do.';

/**
 * The SDK validates tool arguments itself and answers a failure with its own text. Agents should get the
 * same `{error, code, field}` body REST sends, so the tools validate with the table's schema themselves
 * (after authenticating, as REST does) and the SDK's check is turned into a pass-through. The SDK keeps
 * using the schema for tools/list. Pinned SDK 1.32.2; the MCP tests fail if this hook stops working.
 */
function passArgumentsThrough(server: McpServer): void {
  const hook = server as unknown as { validateToolInput: (tool: unknown, args: unknown) => Promise<unknown> };
  if (typeof hook.validateToolInput !== 'function')
    throw new Error('MCP SDK changed: validateToolInput is gone');
  hook.validateToolInput = async (_tool, args) => args ?? {};
}

export function createMcpServer(deps: McpServerDeps): McpServer {
  const { core, logger } = deps;
  const server = new McpServer(
    { name: SERVICE_NAME, version: SERVICE_VERSION, title: 'Agent Context: memory and live data' },
    { capabilities: { logging: {} }, instructions: MCP_INSTRUCTIONS },
  );
  const agentOf = async (extra: McpExtra) => (await core.accounts.authenticate(deps.keyOf(extra))).id;
  passArgumentsThrough(server);

  for (const op of deps.operations) {
    if (!op.mcp) continue;
    server.registerTool(
      op.mcp.tool,
      {
        title: op.title,
        description: `${op.description} ${costSentence(op)} On failure the result is {error, code}: follow what error says.`,
        inputSchema: op.input as z.ZodObject,
        outputSchema: op.output as z.ZodObject,
        annotations: { title: op.title, ...op.mcp.hints },
      },
      async (args: unknown, extra: McpExtra) => {
        try {
          const agentId = await agentOf(extra);
          const input = parseInput(op.input, args, fieldsOf(op.input));
          const idempotencyKey = op.idempotent
            ? parseIdempotencyKey(extra._meta?.idempotency_key, '_meta.idempotency_key')
            : undefined;
          const outcome = await runOperation(core, op, agentId, input, idempotencyKey);
          return toolSuccess(outcome.body, outcome.replayed);
        } catch (err) {
          return toolFailure(mcpError(err, logger, op.mcp?.tool ?? op.name, extra));
        }
      },
    );
  }

  registerMemoryResources(server, { core, operations: deps.operations, logger, agentOf });

  server.registerPrompt(
    'recall',
    {
      title: 'Recall what you know',
      description: `Start a task by loading your stored memories about a topic (costs ${PRICES.memoryOp} cent per tool call).`,
      argsSchema: { topic: z.string().describe('What the task is about.') },
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
  return server;
}
