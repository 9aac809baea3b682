/** `_meta.idempotency_key` on MCP tool calls: the same rules as REST's Idempotency-Key, on the same records. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectHttpClient, textJson } from './mcp-harness.js';

describe('MCP idempotency keys', () => {
  let server: TestServer;
  const clients: Client[] = [];

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
  });
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await server.close();
  });

  async function connect(key: string) {
    const { client } = await connectHttpClient(server.url, { 'X-API-Key': key });
    clients.push(client);
    return client;
  }

  it('a repeated call with the same key replays the first result and charges once', async () => {
    const key = await server.register();
    const client = await connect(key);
    const call = () =>
      client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'm', memory_value: 'v' },
        _meta: { idempotency_key: 'mcp-1' },
      });
    const first = await call();
    expect(first.isError).toBeFalsy();
    expect(first._meta?.idempotent_replayed).toBeUndefined();
    const again = await call();
    expect(again._meta).toMatchObject({ idempotent_replayed: true });
    expect(again.structuredContent).toEqual(first.structuredContent);
    expect(await ledgerSum(server, key)).toBe(49);

    const other = await client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'm', memory_value: 'changed' },
      _meta: { idempotency_key: 'mcp-1' },
    });
    expect(other.isError).toBe(true);
    expect(textJson(other)).toMatchObject({ code: 'idempotency_key_reused', field: 'idempotency_key' });
  });

  it('REST and MCP share the records: the same request under the same key replays across faces', async () => {
    const key = await server.register();
    const rest = await server.request('POST', '/api/ac/data', {
      key,
      body: { agent_key: key, query_type: 'weather', query: 'Lima' },
      headers: { 'Idempotency-Key': 'both-faces' },
    });
    expect(rest.status).toBe(200);
    const client = await connect(key);
    const mcp = await client.callTool({
      name: 'data_fetch',
      arguments: { query_type: 'weather', query: 'Lima' },
      _meta: { idempotency_key: 'both-faces' },
    });
    expect(mcp._meta).toMatchObject({ idempotent_replayed: true });
    expect(mcp.structuredContent).toEqual(rest.body);
    expect(await ledgerSum(server, key)).toBe(48);
  });

  it('a malformed key is an isError result naming the field, and costs nothing', async () => {
    const key = await server.register();
    const client = await connect(key);
    for (const bad of ['', 'x'.repeat(256), 42, 'caf\u00e9']) {
      const res = await client.callTool({
        name: 'memory_search',
        arguments: {},
        _meta: { idempotency_key: bad },
      });
      expect(res.isError).toBe(true);
      expect(textJson(res)).toMatchObject({ code: 'invalid_input', field: 'idempotency_key' });
    }
    expect(await ledgerSum(server, key)).toBe(50);
  });
});
