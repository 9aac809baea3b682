/**
 * MCP over real Streamable HTTP at /mcp, in the era the run speaks (TEST_ERA): discovery without a key, the
 * shared ledger with REST, no protocol sessions, the DNS-rebinding checks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { type McpClient as Client, TEST_ERA } from '../helpers/mcp-era.js';
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
    const { client } = await connect();
    if (TEST_ERA === 'legacy') await client.ping(); // 2026-07-28 has no ping
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

  it("keeps no protocol session: none is minted, GET and DELETE are 405 as in the SDK's stateless mode", async () => {
    const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: base,
      body: JSON.stringify(initializeRequest()),
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    // Any request is served on its own, without initialize first and whatever session id it names.
    const list = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...base, 'mcp-session-id': 'never-minted', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    expect(list.status).toBe(200);
    const answer = JSON.parse(/^data: (.*)$/mu.exec(await list.text())?.[1] ?? 'null');
    expect(answer.result.tools).toHaveLength(10);
    const get = await fetch(`${server.url}/mcp`, { headers: { accept: 'text/event-stream' } });
    const del = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': 'x' } });
    for (const res of [get, del]) {
      expect(res.status).toBe(405);
      expect(((await res.json()) as any).error).toMatchObject({ message: 'Method not allowed.' });
    }
  });

  it('refuses a foreign Host or Origin header on a loopback bind (DNS rebinding), whatever else the request says', async () => {
    const { port } = new URL(server.url);
    const body = JSON.stringify(initializeRequest());
    const http = await import('node:http');
    const post = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              ...headers,
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    expect(await post({ host: `evil.example:${port}` })).toBe(403);
    expect(await post({ origin: 'http://evil.example' })).toBe(403);
    expect(await post({ origin: 'not a url' })).toBe(403);
    expect(await post({ origin: `http://localhost:${port}` })).toBe(200);
    expect(await post({})).toBe(200);
  });
});
