/**
 * MCP resources: the agent's account (`ac://account`, free), its usage (`ac://usage`, free: the REST
 * `account_usage` entry), its memories (`ac://memory/{memory_key}`,
 * listing free, reading charged like memory_retrieve). Reads run the operation table's `account_info` and
 * `memory_retrieve` entries, so price and validation are the tools'. A resource read has no isError
 * result, so a failure is a JSON-RPC error whose message is the sentence a tool would give and whose data
 * is the same body: -32001 on the 2025 revisions, as always; on 2026-07-28 a memory that does not exist is
 * -32602, the revision's resource-not-found code. Every read is the agent's own and changes with its next
 * charged call, so each carries the cache hint `private`, `ttlMs: 0` (cache-hints.ts).
 */

import { type McpServer, ProtocolError, ResourceTemplate } from '@modelcontextprotocol/server';
import type { Core } from '../core/core.js';
import { AppError } from '../core/errors.js';
import { costSentence, type Operation } from '../core/operation-table.js';
import { parseInput } from '../core/validation.js';
import type { Logger } from '../logger.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { AGENT_READ } from './cache-hints.js';
import { JSON_RPC } from './json-rpc-codes.js';
import type { McpEra, McpExtra } from './mcp-extra.js';
import { mcpError } from './tool-results.js';

const JSON_MIME = 'application/json';
const NDJSON_MIME = 'application/x-ndjson';
/** The largest export `ac://memories.ndjson` answers in one read (a resource read is one message). */
const EXPORT_MAX_BYTES = 8 * 1024 * 1024;

interface ResourceDeps {
  core: Core;
  operations: readonly Operation[];
  logger: Logger;
  agentOf(extra: McpExtra): Promise<string>;
  /** The OAuth client that spends, when the request carried its access token. */
  spenderOf(extra: McpExtra): string | undefined;
  /** The protocol era the server answers in: it decides the code of a resource that does not exist. */
  era: McpEra;
  /** Where each read is counted (a charged read of a memory too). */
  metrics?: Pick<ServiceMetrics, 'request'>;
}

function memoryUri(key: string): string {
  return `ac://memory/${encodeURIComponent(key)}`;
}

function decodeKey(raw: string | string[] | undefined): string {
  const value = Array.isArray(raw) ? raw.join('/') : (raw ?? '');
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export function registerMemoryResources(server: McpServer, deps: ResourceDeps): void {
  const { core, logger } = deps;
  const operation = (name: string): Operation => {
    const found = deps.operations.find((op) => op.name === name);
    if (!found) throw new Error(`the operation table has no ${name}`);
    return found;
  };
  const readFailure = (error: AppError) =>
    new ProtocolError(
      deps.era === 'modern' && error.code === 'not_found'
        ? JSON_RPC.resourceNotFound
        : JSON_RPC.resourceFailed,
      error.message,
      error.toBody(),
    );
  /** Runs a table entry for the caller; failures become a JSON-RPC error carrying the REST body. */
  const run = async (op: Operation, fields: Record<string, unknown>, extra: McpExtra) => {
    const started = process.hrtime.bigint();
    const observe = (status: string, costCents = 0) =>
      deps.metrics?.request({
        face: 'mcp',
        operation: op.name,
        status,
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
        costCents,
      });
    try {
      const body = await op.run(
        core,
        await deps.agentOf(extra),
        parseInput(op.input, fields),
        undefined,
        deps.spenderOf(extra),
      );
      const cost = (body as { cost_cents?: unknown }).cost_cents;
      observe('ok', typeof cost === 'number' ? cost : 0);
      return body;
    } catch (err) {
      const error = mcpError(err, logger, op.name, extra);
      observe(error.code);
      throw readFailure(error);
    }
  };
  const accountInfo = operation('account_info');
  const retrieve = operation('memory_retrieve');
  const exportOp = operation('memory_export');
  const usage = operation('account_usage');

  server.registerResource(
    'memories-export',
    'ac://memories.ndjson',
    {
      title: 'Memory export',
      description:
        'All your live memories as NDJSON, one per line in key order, as memory_import reads them back. Free. ' +
        `At most ${EXPORT_MAX_BYTES} bytes here; a larger export is streamed by GET /api/ac/memory/export.`,
      mimeType: NDJSON_MIME,
      cacheHint: AGENT_READ,
    },
    async (uri, extra) => {
      const lines = (await run(exportOp, {}, extra)) as unknown as AsyncIterable<unknown>;
      let text = '';
      let bytes = 0;
      for await (const line of lines) {
        const row = `${JSON.stringify(line)}\n`;
        text += row;
        bytes += Buffer.byteLength(row, 'utf8');
        if (bytes > EXPORT_MAX_BYTES) {
          const error = new AppError(
            'payload_too_large',
            `Your export is larger than the ${EXPORT_MAX_BYTES} bytes this resource gives; stream it over REST ` +
              'with GET /api/ac/memory/export instead. Nothing was charged.',
          );
          throw readFailure(error);
        }
      }
      return { contents: [{ uri: uri.href, mimeType: NDJSON_MIME, text }] };
    },
  );

  server.registerResource(
    'account',
    'ac://account',
    {
      title: 'Account',
      description: 'Your balance, plan and recent ledger entries. Free.',
      mimeType: JSON_MIME,
      cacheHint: AGENT_READ,
    },
    async (uri, extra) => {
      const info = await run(accountInfo, {}, extra);
      return { contents: [{ uri: uri.href, mimeType: JSON_MIME, text: JSON.stringify(info) }] };
    },
  );

  server.registerResource(
    'usage',
    'ac://usage',
    {
      title: 'Usage',
      // The REST entry's own words, over its default of 30 days.
      description: `${usage.summary} Over the last 30 days. ${costSentence(usage)}`,
      mimeType: JSON_MIME,
      cacheHint: AGENT_READ,
    },
    async (uri, extra) => {
      const figures = await run(usage, {}, extra);
      return { contents: [{ uri: uri.href, mimeType: JSON_MIME, text: JSON.stringify(figures) }] };
    },
  );

  server.registerResource(
    'memory',
    new ResourceTemplate('ac://memory/{memory_key}', {
      // Listing is free and needs a key; without one there is simply nothing to list.
      list: async (extra) => {
        let agentId: string;
        try {
          agentId = await deps.agentOf(extra);
        } catch {
          return { resources: [] };
        }
        const index = await core.memories.listMemoryIndex(agentId, core.limits.searchLimitMax);
        return {
          resources: index.map((m) => ({
            uri: memoryUri(m.memory_key),
            name: m.memory_key,
            description: `${m.memory_type} memory, updated ${m.updated_at}`,
            mimeType: JSON_MIME,
          })),
        };
      },
    }),
    {
      title: 'Memory',
      description: `One of your stored memories. Reading it is charged like memory_retrieve. ${costSentence(retrieve)}`,
      mimeType: JSON_MIME,
      cacheHint: AGENT_READ,
    },
    async (uri, variables, extra) => {
      const result = await run(retrieve, { memory_key: decodeKey(variables.memory_key) }, extra);
      return { contents: [{ uri: uri.href, mimeType: JSON_MIME, text: JSON.stringify(result) }] };
    },
  );
}
