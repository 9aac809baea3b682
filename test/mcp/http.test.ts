/** MCP over real Streamable HTTP at /mcp: discovery without a key, the shared ledger with REST, session ownership. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectHttpClient, initializeRequest, textJson } from './mcp-harness.js';

describe('MCP over Streamable HTTP', () => {
  let server: TestServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await server.close();
  });

  async function connect(headers: Record<string, string> = {}) {
    const connected = await connectHttpClient(server.url, headers);
    clients.push(connected.client);
    return connected;
  }

  it('lists tools, resources and prompts without a key; a call without a key says how to get one', async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    await client.ping();
    expect((await client.listTools()).tools).toHaveLength(10);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      'ac://memories.ndjson',
      'ac://account',
      'ac://usage',
    ]);
    expect((await client.listPrompts()).prompts).toHaveLength(1);
    const res = await client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'k', memory_value: 'v' },
    });
    expect(res.isError).toBe(true);
    expect(textJson(res)).toMatchObject({ code: 'unauthorized' });
    expect(textJson(res).error).toMatch(/POST \/api\/ac\/register/);
  });

  it('shares one store and one ledger with REST, both ways', async () => {
    const key = await server.register();
    const { client } = await connect({ 'X-API-Key': key });
    const stored = await client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'from-mcp', memory_value: 'hello' },
    });
    expect(stored.structuredContent).toMatchObject({ credit_balance_cents: 49 });

    const viaRest = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'from-mcp' },
    });
    expect(viaRest.status).toBe(200);
    expect(viaRest.body).toMatchObject({ memory: { memory_value: 'hello' }, credit_balance_cents: 48 });

    const restStore = await server.request('POST', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: 'from-rest', memory_value: 'world' },
    });
    expect(restStore.body.credit_balance_cents).toBe(47);
    const viaMcp = await client.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'from-rest' } });
    expect(viaMcp.structuredContent).toMatchObject({
      memory: { memory_value: 'world' },
      credit_balance_cents: 46,
    });

    const ledger = await server.request('GET', '/api/ac/account/transactions', { key });
    expect(ledger.body.transactions.map((t: { operation: string }) => t.operation)).toEqual([
      'memory_retrieve',
      'memory_store',
      'memory_retrieve',
      'memory_store',
      'starter_credit',
    ]);
    const info = await client.callTool({ name: 'account_info', arguments: {} });
    expect(info.structuredContent).toMatchObject({ credit_balance_cents: 46 });
  });

  it('accepts the key as Authorization: Bearer too', async () => {
    const key = await server.register();
    const { client } = await connect({ Authorization: `Bearer ${key}` });
    const res = await client.callTool({ name: 'account_info', arguments: {} });
    expect(res.structuredContent).toMatchObject({ credit_balance_cents: 50 });
  });

  it('gives a session to the agent whose key first used it: another key on it gets 403', async () => {
    const alice = await server.register();
    const bob = await server.register();
    const { transport } = await connect({ 'X-API-Key': alice });
    const sessionId = transport.sessionId as string;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' });
    const stolen = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'x-api-key': bob },
      body,
    });
    expect(stolen.status).toBe(403);
    expect(((await stolen.json()) as any).error.message).toMatch(/belongs to another agent/);
    const own = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'x-api-key': alice },
      body,
    });
    expect(own.status).toBe(200);
  });

  it('an owned session refuses requests without its key, DELETE included', async () => {
    const alice = await server.register();
    const { client, transport } = await connect({ 'X-API-Key': alice });
    await client.callTool({ name: 'account_info', arguments: {} }); // alice now owns it
    const headers = { 'mcp-session-id': transport.sessionId as string, 'mcp-protocol-version': '2025-06-18' };
    const keyless = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers });
    expect(keyless.status).toBe(403);
    const bogus = await fetch(`${server.url}/mcp`, {
      method: 'GET',
      headers: { ...headers, 'x-api-key': 'ac_bogus', accept: 'text/event-stream' },
    });
    expect(bogus.status).toBe(403);
    expect((await client.callTool({ name: 'account_info', arguments: {} })).isError).toBeFalsy();
  });

  it('caps open sessions, evicting the least recently used one that no agent owns', async () => {
    const capped = await startTestServer({ env: { AC_MCP_MAX_SESSIONS: '2' }, live: new FakeLiveSource() });
    try {
      const key = await capped.register();
      const open = async (headers: Record<string, string>) => {
        const transport = new StreamableHTTPClientTransport(new URL(`${capped.url}/mcp`), {
          requestInit: { headers },
        });
        const client = new Client({ name: 'cap', version: '1.0.0' });
        await client.connect(transport);
        clients.push(client);
        return client;
      };
      const owned = await open({ 'X-API-Key': key });
      const anonymous = await open({});
      await open({}); // evicts the anonymous one
      await expect(anonymous.listTools()).rejects.toThrow();
      expect((await owned.listTools()).tools).toHaveLength(10);
      const key2 = await capped.register();
      const owned2 = await open({ 'X-API-Key': key2 }); // evicts the second anonymous one
      expect((await owned2.listTools()).tools).toHaveLength(10);
      const refused = await fetch(`${capped.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(initializeRequest()),
      });
      expect(refused.status).toBe(503);
    } finally {
      await capped.close();
    }
  });

  it('a session opened without a key belongs to the first key that uses it', async () => {
    const alice = await server.register();
    const bob = await server.register();
    const { transport } = await connect();
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': transport.sessionId as string,
      'mcp-protocol-version': '2025-06-18',
    };
    const call = (key: string) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'x-api-key': key },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'account_info', arguments: {} },
        }),
      });
    expect((await call(alice)).status).toBe(200);
    expect((await call(bob)).status).toBe(403);
  });

  it('rejects an unknown session, a non-initialize first request and a foreign Host header', async () => {
    const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const unknown = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...base, 'mcp-session-id': 'nope' },
      body,
    });
    expect(unknown.status).toBe(404);
    const noInit = await fetch(`${server.url}/mcp`, { method: 'POST', headers: base, body });
    expect(noInit.status).toBe(400);
    const { port } = new URL(server.url);
    const http = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: { ...base, host: `evil.example:${port}` },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
    expect(status).toBe(403);
  });

  it('closes a session left idle longer than AC_MCP_SESSION_IDLE_SECONDS', async () => {
    const short = await startTestServer({
      env: { AC_MCP_SESSION_IDLE_SECONDS: '1' },
      live: new FakeLiveSource(),
    });
    try {
      const transport = new StreamableHTTPClientTransport(new URL(`${short.url}/mcp`));
      const client = new Client({ name: 'idle', version: '1.0.0' });
      await client.connect(transport);
      const sessionId = transport.sessionId as string;
      await new Promise((r) => setTimeout(r, 2200));
      const res = await fetch(`${short.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }),
      });
      expect(res.status).toBe(404);
      await client.close();
    } finally {
      await short.close();
    }
  });

  it('ends a session on DELETE', async () => {
    const key = await server.register();
    const { client, transport } = await connect({ 'X-API-Key': key });
    await transport.terminateSession();
    await expect(client.listTools()).rejects.toThrow();
  });
});
