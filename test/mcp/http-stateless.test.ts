/**
 * MCP over Streamable HTTP on PostgreSQL, where several instances share the database and a load balancer may
 * send each request to another one: /mcp is stateless (on every store; on this one it must be). Two real
 * servers on one test database, the SDK's own client of the run's era (TEST_ERA) moved from one to the other
 * after its first request, raw requests for what the client does not send.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { type McpClient as Client, httpTransport, newClient, TEST_ERA } from '../helpers/mcp-era.js';
import { testDatabase } from '../helpers/postgres.js';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';
import { initializeRequest, textJson } from './mcp-harness.js';

/** One request the client sent: which instance got it, the HTTP method, the JSON-RPC method, the status. */
interface Sent {
  to: 'A' | 'B';
  http: string;
  rpc: string | undefined;
  status: number;
  sessionId: string | null;
}

describe('MCP over Streamable HTTP on a shared PostgreSQL store (stateless)', () => {
  let a: TestServer;
  let b: TestServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    const db = await testDatabase({ label: 'mcp_stateless' });
    const env = { DATABASE_URL: db.url, DATA_DIR: '' };
    a = await startTestServer({ env, live: new FakeLiveSource() });
    b = await startTestServer({ env, live: new FakeLiveSource() });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await a?.close();
    await b?.close();
  });

  /**
   * The SDK client, opened on A (initialize, or server/discover on 2026-07-28); every later request goes to
   * B, as a load balancer without sticky sessions may send it. `sent` records each request.
   */
  async function connectAcross(headers: Record<string, string> = {}) {
    const sent: Sent[] = [];
    const toB = async (url: string | URL, init?: RequestInit) => {
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      const rpc: string | undefined = body?.method;
      const to = rpc === 'initialize' || rpc === 'server/discover' ? 'A' : 'B';
      const target = new URL(url);
      target.host = new URL(to === 'A' ? a.url : b.url).host;
      const res = await fetch(target, init);
      sent.push({
        to,
        http: init?.method ?? 'GET',
        rpc,
        status: res.status,
        sessionId: res.headers.get('mcp-session-id'),
      });
      return res;
    };
    const transport = httpTransport(new URL(`${a.url}/mcp`), headers, { fetch: toB as typeof fetch });
    const client = newClient({ name: 'across-instances' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport, sent };
  }

  it('serves a client initialized on one instance from the other: one store and one ledger', async () => {
    const key = await a.register();
    const { client, sent } = await connectAcross({ 'X-API-Key': key });

    expect((await client.listTools()).tools.map((t) => t.name)).toContain('memory_store');
    const stored = await client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'across', memory_value: 'stored via B' },
    });
    expect(stored.isError).toBeFalsy();
    expect(stored.structuredContent).toMatchObject({ credit_balance_cents: 49 });
    const retrieved = await client.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'across' } });
    expect(retrieved.structuredContent).toMatchObject({
      memory: { memory_value: 'stored via B' },
      credit_balance_cents: 48,
    });

    // Opened on A; everything after it on B, answered without a session (on the 2025 era the client's GET
    // for a notification stream gets 405, which the SDK client takes as "no stream").
    const opening =
      TEST_ERA === 'legacy'
        ? [
            ['A', 'POST', 'initialize', 200],
            ['B', 'POST', 'notifications/initialized', 202],
            ['B', 'GET', undefined, 405],
          ]
        : [['A', 'POST', 'server/discover', 200]];
    expect(sent.map(({ to, http, rpc, status }) => [to, http, rpc, status])).toEqual([
      ...opening,
      ['B', 'POST', 'tools/list', 200],
      ['B', 'POST', 'tools/call', 200],
      ['B', 'POST', 'tools/call', 200],
    ]);
    expect(sent.every((s) => s.sessionId === null)).toBe(true);

    // The ledger is the database's: A shows what B charged, and a call on A sees B's memory.
    expect(await ledgerSum(a, key)).toBe(48);
    const ledger = await a.request('GET', '/api/ac/account/transactions', { key });
    expect(ledger.body.transactions.map((t: { operation: string }) => t.operation)).toEqual([
      'memory_retrieve',
      'memory_store',
      'starter_credit',
    ]);
    const onA = newClient({ name: 'on-a' });
    clients.push(onA);
    await onA.connect(httpTransport(new URL(`${a.url}/mcp`), { Authorization: `Bearer ${key}` }));
    const again = await onA.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'across' } });
    expect(again.structuredContent).toMatchObject({
      memory: { memory_value: 'stored via B' },
      credit_balance_cents: 47,
    });
    expect(await ledgerSum(b, key)).toBe(47);
  });

  it("answers GET and DELETE with 405, as the SDK's stateless legacy mode does", async () => {
    const key = await a.register();
    const headers = { 'x-api-key': key, 'mcp-protocol-version': '2025-06-18' };
    const get = await fetch(`${b.url}/mcp`, { headers: { ...headers, accept: 'text/event-stream' } });
    const del = await fetch(`${b.url}/mcp`, {
      method: 'DELETE',
      headers: { ...headers, 'mcp-session-id': 'x' },
    });
    for (const res of [get, del]) {
      expect(res.status).toBe(405);
      expect(((await res.json()) as any).error).toMatchObject({ message: 'Method not allowed.' });
    }
  });

  it('takes any request without initialize first, and sends no session id', async () => {
    const res = await fetch(`${b.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const data = /^data: (.*)$/mu.exec(await res.text())?.[1];
    const answer = JSON.parse(data ?? 'null');
    expect(answer.id).toBe(7);
    expect(answer.result.tools.map((t: { name: string }) => t.name)).toContain('memory_store');
    const init = await fetch(`${a.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(initializeRequest()),
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
  });

  it('lists without a key; a call without a key is the same isError result as on the JSON file store', async () => {
    const { client } = await connectAcross();
    expect((await client.listTools()).tools).toHaveLength(10);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      'ac://memories.ndjson',
      'ac://account',
      'ac://usage',
    ]);
    expect((await client.listPrompts()).prompts).toHaveLength(1);
    const call = { name: 'memory_store', arguments: { memory_key: 'k', memory_value: 'v' } };
    const stateless = await client.callTool(call);
    expect(stateless.isError).toBe(true);
    expect(textJson(stateless)).toMatchObject({ code: 'unauthorized' });
    expect(textJson(stateless).error).toMatch(/POST \/api\/ac\/register/);

    // The same call on the JSON file store (named explicitly) answers the same.
    const dataDir = await mkdtemp(path.join(tmpdir(), 'ac-mcp-json-'));
    const onJson = await startTestServer({
      dataDir,
      env: { DATA_DIR: dataDir, DATABASE_URL: '' },
      live: new FakeLiveSource(),
    });
    try {
      const jsonClient = newClient({ name: 'on-json' });
      clients.push(jsonClient);
      await jsonClient.connect(httpTransport(new URL(`${onJson.url}/mcp`)));
      expect(await jsonClient.callTool(call)).toEqual(stateless);
    } finally {
      await onJson.close();
    }
  });
});
