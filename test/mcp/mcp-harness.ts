/**
 * An MCP client wired in-process to a server over a real service in a temporary DATA_DIR: on the 2025 era
 * through a linked pair of in-memory transports, on 2026-07-28 through the SDK's HTTP handler called directly
 * (no socket), as the SDK's own tests do.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { loadConfig } from '../../src/config.js';
import type { LiveDataSource } from '../../src/core/live-port.js';
import { createMcpServer } from '../../src/mcp/create-mcp-server.js';
import { openService, type Service } from '../../src/service.js';
import { httpTransport, type McpClient, type McpEra, newClient, TEST_ERA } from '../helpers/mcp-era.js';

export interface InProcess {
  service: Service;
  /** A client whose calls present `key` (or none). */
  connect(key: string | undefined, options?: { era?: McpEra; elicitation?: boolean }): Promise<McpClient>;
  register(email?: string): Promise<string>;
  close(): Promise<void>;
}

let n = 0;

export async function openInProcess(
  options: { live?: LiveDataSource; env?: Record<string, string> } = {},
): Promise<InProcess> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'ac-mcp-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    AC_LOG_LEVEL: 'silent',
    AC_RATE_LIMIT: 'off',
    ...options.env,
  });
  const service = await openService(config, {
    command: 'test',
    ...(options.live ? { live: options.live } : {}),
  });
  const clients: McpClient[] = [];
  return {
    service,
    connect: async (key, connectOptions = {}) => {
      const era = connectOptions.era ?? TEST_ERA;
      const client = newClient({ era, ...(connectOptions.elicitation ? { elicitation: true } : {}) });
      if (era === 'legacy') {
        const server = createMcpServer({ ...service, keyOf: () => key }, 'legacy');
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        await Promise.all([server.connect(serverSide as never), client.connect(clientSide)]);
      } else {
        const handler = createMcpHandler(({ era: served }) =>
          createMcpServer({ ...service, keyOf: () => key }, served),
        );
        const direct = ((input: string | URL | Request, init?: RequestInit) =>
          handler.fetch(new Request(input, init))) as typeof fetch;
        await client.connect(httpTransport(new URL('http://in-process/mcp'), {}, { era, fetch: direct }));
      }
      clients.push(client);
      return client;
    },
    register: async (email) => {
      const res = await service.core.accounts.register({
        email: email ?? `mcp${++n}-${process.pid}@example.com`,
      });
      return res.agent_key;
    },
    close: async () => {
      for (const c of clients) await c.close();
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The JSON body in a tool result's text content. */
export function textJson(result: unknown): any {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return JSON.parse(content[0]?.text ?? 'null');
}

/** A raw JSON-RPC `initialize` request, for tests that speak to /mcp without the SDK client. */
export function initializeRequest(clientName = 'raw-test') {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: clientName, version: '1' },
    },
  };
}

/** The SDK client of the era over Streamable HTTP to `${baseUrl}/mcp`, sending `headers` with every request. */
export async function connectHttpClient(
  baseUrl: string,
  headers: Record<string, string> = {},
  options: { era?: McpEra; elicitation?: boolean } = {},
) {
  const transport = httpTransport(new URL(`${baseUrl}/mcp`), headers, options);
  const client = newClient({ ...options, name: 'http-test' });
  await client.connect(transport);
  return { client, transport };
}
