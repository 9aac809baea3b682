/**
 * One request, one key lookup: the rate limiter, the REST route and the MCP endpoint (session ownership and
 * the tool call) share the identity resolved at the edge, with rate limits on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { initializeRequest } from '../mcp/mcp-harness.js';

describe('a request authenticates once', () => {
  let server: TestServer;
  let lookups = 0;

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource(), env: { AC_RATE_LIMIT: 'on' } });
    const accounts = server.running.service.core.accounts;
    const authenticate = accounts.authenticate;
    accounts.authenticate = (key) => {
      lookups++;
      return authenticate(key);
    };
  });
  afterAll(() => server.close());

  async function counted<T>(work: () => Promise<T>): Promise<{ result: T; lookups: number }> {
    const before = lookups;
    const result = await work();
    return { result, lookups: lookups - before };
  }

  it('over REST', async () => {
    const key = await server.register();
    const stored = await counted(() =>
      server.request('POST', '/api/ac/memory', {
        key,
        body: { agent_key: key, memory_key: 'k', memory_value: 'v' },
      }),
    );
    expect(stored.result.status).toBe(200);
    expect(stored.lookups).toBe(1);
    const unknown = await counted(() => server.request('GET', '/api/ac/account', { key: 'ac_unknown' }));
    expect(unknown.result.status).toBe(401);
    expect(unknown.lookups).toBe(1);
  });

  it('over MCP (Streamable HTTP): one lookup per POST, the tool call included', async () => {
    const key = await server.register();
    const post = (body: unknown, version?: string) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-api-key': key,
          ...(version ? { 'mcp-protocol-version': version } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await counted(() => post(initializeRequest()));
    expect(init.lookups).toBe(1);
    await init.result.text();
    const call = await counted(async () => {
      const res = await post(
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'memory_store', arguments: { memory_key: 'a', memory_value: 'b' } },
        },
        '2025-06-18',
      );
      return res.text();
    });
    expect(call.result).toContain('"success":true');
    expect(call.lookups).toBe(1); // rate limiter, endpoint and tool call share it
  });
});
