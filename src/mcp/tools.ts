/**
 * The MCP tools, one per operation-table entry that names a tool, installed on the SDK's public low-level
 * API (`Server.setRequestHandler` for tools/list and tools/call) rather than `McpServer.registerTool`: the
 * tools validate their arguments with the table's schemas themselves, after authenticating as REST does, so
 * that a bad argument gets the same `{error, code, field}` body REST sends, not the SDK's own text.
 */

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Core } from '../core/core.js';
import { AppError } from '../core/errors.js';
import { parseIdempotencyKey } from '../core/idempotency.js';
import { costSentence, type Operation } from '../core/operations.js';
import { runOperation } from '../core/run-operation.js';
import { fieldsOf, parseInput } from '../core/validation.js';
import type { Logger } from '../logger.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { McpExtra } from './mcp-extra.js';
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
  /** Where each call is counted, with its outcome, duration and the cents it charged. */
  metrics?: Pick<ServiceMetrics, 'request'>;
}

type ToolEntries = ReadonlyMap<string, { op: Operation; tool: Tool }>;

/**
 * The tools of an operation table, built once per table: their JSON Schemas take milliseconds to generate,
 * and stateless MCP over HTTP builds a server for every request.
 */
const toolsOfTable = new WeakMap<readonly Operation[], ToolEntries>();

function toolEntries(operations: readonly Operation[]): ToolEntries {
  let entries = toolsOfTable.get(operations);
  if (!entries) {
    const built = new Map<string, { op: Operation; tool: Tool }>();
    for (const op of operations) {
      if (op.mcp) built.set(op.mcp.tool, { op, tool: toolOf({ ...op, mcp: op.mcp }) });
    }
    entries = built;
    toolsOfTable.set(operations, entries);
  }
  return entries;
}

export function registerTools(server: McpServer, deps: ToolDeps): void {
  const { core, logger } = deps;
  const entries = toolEntries(deps.operations);
  const tools = [...entries.values()].map((entry) => entry.tool);
  server.server.registerCapabilities({ tools: { listChanged: true } });
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const entry = entries.get(name);
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
      const idempotencyKey = entry.op.idempotent
        ? parseIdempotencyKey(request.params._meta?.idempotency_key, '_meta.idempotency_key')
        : undefined;
      const outcome = await runOperation(core, entry.op, agentId, input, idempotencyKey);
      const cost = outcome.body.cost_cents;
      observe('ok', !outcome.replayed && typeof cost === 'number' ? cost : 0);
      return toolSuccess(outcome.body, outcome.replayed);
    } catch (err) {
      const error = mcpError(err, logger, name, extra);
      observe(error.code);
      return toolFailure(error);
    }
  });
}
