/**
 * The MCP tools, one per operation-table entry that names a tool, installed on the SDK's low-level handlers
 * (`tools/list` and `tools/call`) rather than `McpServer.registerTool`: the tools validate their arguments with
 * the table's schemas themselves, after authenticating as REST does, so that a bad argument gets the same
 * `{error, code, field}` body REST sends, not the SDK's own text. `tools/list` answers in table order, the same
 * on every call (the 2026-07-28 revision asks for a deterministic order).
 */

import type { CallToolResult, InputRequiredResult, McpServer, Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Core } from '../core/core.js';
import { AppError } from '../core/errors.js';
import { parseIdempotencyKey } from '../core/idempotency.js';
import { costSentence, type Operation } from '../core/operation-table.js';
import { runOperation } from '../core/run-operation.js';
import { fieldsOf, parseInput } from '../core/validation.js';
import type { Logger } from '../logger.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { confirmationFor } from './confirmation.js';
import type { McpExtra } from './mcp-extra.js';
import type { McpLog } from './mcp-log.js';
import { mcpError, toolFailure, toolSuccess } from './tool-results.js';

type ObjectJsonSchema = Tool['inputSchema'];

/** The JSON Schema (draft-07, as MCP clients expect) of a table schema, for the side `io` of it. */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): ObjectJsonSchema {
  return z.toJSONSchema(schema, { target: 'draft-7', io }) as ObjectJsonSchema;
}

function toolOf(op: Operation & { mcp: NonNullable<Operation['mcp']> }): Tool {
  return {
    name: op.mcp.tool,
    title: op.title,
    description: `${op.description} ${costSentence(op)} On failure the result is {error, code}: follow what error says.`,
    inputSchema: jsonSchemaOf(op.input, 'input'),
    outputSchema: jsonSchemaOf(op.output, 'output'),
    annotations: { title: op.title, ...op.mcp.hints },
    execution: { taskSupport: 'forbidden' },
  };
}

export interface ToolDeps {
  core: Core;
  operations: readonly Operation[];
  logger: Logger;
  /** The calling agent's id; throws `unauthorized` when the caller's key is missing or unknown. */
  agentOf(extra: McpExtra): Promise<string>;
  /** The OAuth client that spends, when the request carried its access token. */
  spenderOf(extra: McpExtra): string | undefined;
  /** Where each call is counted, with its outcome, duration and the cents it charged. */
  metrics?: Pick<ServiceMetrics, 'request'>;
  /** Log notifications to the client, for the requests that asked for them. */
  log: McpLog;
}

interface ToolEntries {
  byName: ReadonlyMap<string, { op: Operation; tool: Tool }>;
  /** The tools/list answer: the same object on every call. */
  list: { tools: Tool[] };
}

/**
 * The tools of an operation table, built once per table: their JSON Schemas take milliseconds to generate,
 * and MCP over HTTP builds a server for every request.
 */
const toolsOfTable = new WeakMap<readonly Operation[], ToolEntries>();

function toolEntries(operations: readonly Operation[]): ToolEntries {
  let entries = toolsOfTable.get(operations);
  if (!entries) {
    const byName = new Map<string, { op: Operation; tool: Tool }>();
    for (const op of operations) {
      if (op.mcp) byName.set(op.mcp.tool, { op, tool: toolOf({ ...op, mcp: op.mcp }) });
    }
    entries = { byName, list: { tools: [...byName.values()].map((entry) => entry.tool) } };
    toolsOfTable.set(operations, entries);
  }
  return entries;
}

const DECLINED =
  'The person declined this call when asked to confirm it: nothing was done and nothing was charged. Do not ' +
  'repeat it unless they ask for it.';

export function registerTools(server: McpServer, deps: ToolDeps): void {
  const { core, logger } = deps;
  const entries = toolEntries(deps.operations);
  server.server.registerCapabilities({ tools: {} });
  server.server.setRequestHandler('tools/list', () => entries.list);
  server.server.setRequestHandler(
    'tools/call',
    async (request, extra): Promise<CallToolResult | InputRequiredResult> => {
      const name = request.params.name;
      const entry = entries.byName.get(name);
      const started = process.hrtime.bigint();
      const observe = (status: string, costCents = 0) =>
        deps.metrics?.request({
          face: 'mcp',
          operation: entry ? entry.op.name : 'other',
          status,
          seconds: Number(process.hrtime.bigint() - started) / 1e9,
          costCents,
        });
      try {
        if (!entry) {
          throw new AppError(
            'not_found',
            `Tool ${name} not found: tools/list names the tools of this server.`,
            {
              tool: name,
            },
          );
        }
        const agentId = await deps.agentOf(extra);
        const input = parseInput(entry.op.input, request.params.arguments ?? {}, fieldsOf(entry.op.input));
        const confirmation = confirmationFor(entry.op, input, extra);
        if (confirmation.kind === 'ask') return confirmation.result;
        if (confirmation.kind === 'declined') throw new AppError('conflict', DECLINED, { declined: true });
        const idempotencyKey = entry.op.idempotent
          ? parseIdempotencyKey(request.params._meta?.idempotency_key, '_meta.idempotency_key')
          : undefined;
        const outcome = await runOperation(
          core,
          entry.op,
          agentId,
          input,
          idempotencyKey,
          deps.spenderOf(extra),
        );
        const cost = outcome.body.cost_cents;
        const charged = !outcome.replayed && typeof cost === 'number' ? cost : 0;
        observe('ok', charged);
        await deps.log(extra, 'info', { tool: name, outcome: 'ok', cost_cents: charged });
        return toolSuccess(outcome.body, outcome.replayed);
      } catch (err) {
        const error = mcpError(err, logger, name, extra);
        observe(error.code);
        await deps.log(extra, 'warning', { tool: name, outcome: error.code, error: error.message });
        return toolFailure(error);
      }
    },
  );
}
