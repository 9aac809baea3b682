/** An MCP client wired in-process (InMemoryTransport) to a server over a real service in a temporary DATA_DIR. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { loadConfig } from '../../src/config.js';
import type { LiveDataSource } from '../../src/core/live-port.js';
import { createMcpServer } from '../../src/mcp/create-mcp-server.js';
import { openService, type Service } from '../../src/service.js';

export interface InProcess {
  service: Service;
  /** A client whose calls present `key` (or none). */
  connect(key: string | undefined): Promise<Client>;
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
  const clients: Client[] = [];
  return {
    service,
    connect: async (key) => {
      const server = createMcpServer({ ...service, keyOf: () => key });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const client = new Client({ name: 'test', version: '1.0.0' });
      await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
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

/** The SDK client over Streamable HTTP to `${baseUrl}/mcp`, sending `headers` with every request. */
export async function connectHttpClient(baseUrl: string, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers },
  });
  const client = new Client({ name: 'http-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}
