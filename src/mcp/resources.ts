/**
 * MCP resources: the agent's account (`ac://account`, free) and its memories (`ac://memory/{memory_key}`,
 * listing free, reading charged like memory_retrieve). A resource read has no isError result, so a failure
 * is a JSON-RPC error whose message is the same sentence a tool would give and whose data is the body.
 */

import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Core } from '../core/core.js';
import { parseInput } from '../core/validation.js';
import type { Logger } from '../logger.js';
import type { McpExtra } from './create-mcp-server.js';
import { mcpError } from './tool-results.js';

const JSON_MIME = 'application/json';
/** JSON-RPC error code for a failed resource read (implementation-defined server error range). */
const RESOURCE_ERROR = -32001;

interface ResourceDeps {
  core: Core;
  logger: Logger;
  agentOf(extra: McpExtra): Promise<string>;
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
  const fail = (err: unknown, context: string): never => {
    const error = mcpError(err, logger, context);
    throw new McpError(RESOURCE_ERROR, error.message, error.toBody());
  };

  server.registerResource(
    'account',
    'ac://account',
    {
      title: 'Account',
      description: 'Your balance, plan and recent ledger entries. Free.',
      mimeType: JSON_MIME,
    },
    async (uri, extra) => {
      try {
        const info = await core.accounts.accountInfo(await deps.agentOf(extra), { limit: 10 });
        return { contents: [{ uri: uri.href, mimeType: JSON_MIME, text: JSON.stringify(info) }] };
      } catch (err) {
        return fail(err, 'ac://account');
      }
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
      description: 'One of your stored memories. Reading it costs 1 cent, like memory_retrieve.',
      mimeType: JSON_MIME,
    },
    async (uri, variables, extra) => {
      try {
        const input = parseInput(core.schemas.RetrieveInput, { memory_key: decodeKey(variables.memory_key) });
        const result = await core.memories.retrieveMemory(await deps.agentOf(extra), input);
        return { contents: [{ uri: uri.href, mimeType: JSON_MIME, text: JSON.stringify(result) }] };
      } catch (err) {
        return fail(err, 'ac://memory');
      }
    },
  );
}
