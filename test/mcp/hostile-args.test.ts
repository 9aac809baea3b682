/**
 * The hostile-input catalogue (issue 6) for MCP tool arguments, with the real SDK client, in-process and
 * over Streamable HTTP: each row is an isError result whose text is the REST error body `{error, code,
 * field?}`, nothing is charged or stored, and the server keeps answering. Then a few raw JSON-RPC bodies
 * over HTTP /mcp (malformed JSON, garbage batches, bodies too large or not JSON), answered with JSON-RPC
 * errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { type McpClient as Client, httpTransport, newClient, TEST_ERA } from '../helpers/mcp-era.js';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';
import { type InProcess, initializeRequest, openInProcess, textJson } from './mcp-harness.js';

interface Row {
  name: string;
  tool: string;
  /** Built fresh for each call; JSON.parse where a key such as `__proto__` must be an own property. */
  args: (depth: number) => Record<string, unknown>;
  field?: string;
  mentions?: RegExp;
}

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

/** Every row is `invalid_input`: the tools refuse bad arguments before authenticating anything away. */
const CATALOGUE: Row[] = [
  {
    name: 'memory_key as a number',
    tool: 'memory_store',
    args: () => ({ memory_key: 5, memory_value: 'v' }),
    field: 'memory_key',
    mentions: /must be of type string/u,
  },
  {
    name: 'memory_key as null',
    tool: 'memory_retrieve',
    args: () => ({ memory_key: null }),
    field: 'memory_key',
  },
  {
    name: 'memory_key as an array',
    tool: 'memory_delete',
    args: () => ({ memory_key: ['a', 'b'] }),
    field: 'memory_key',
  },
  {
    name: 'memory_value as an object',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: { a: 1 } }),
    field: 'memory_value',
  },
  {
    name: 'memory_value as null',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: null }),
    field: 'memory_value',
  },
  {
    name: 'metadata as an array',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: 'v', metadata: [1] }),
    field: 'metadata',
    mentions: /JSON object/u,
  },
  {
    name: 'metadata as null',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: 'v', metadata: null }),
    field: 'metadata',
  },
  {
    name: 'metadata as a string',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: 'v', metadata: '{}' }),
    field: 'metadata',
  },
  {
    name: 'memory_type not in the enum',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: 'v', memory_type: 'secret' }),
    field: 'memory_type',
    mentions: /"context", "preference"/u,
  },
  {
    name: 'limit as a numeric string',
    tool: 'memory_search',
    args: () => ({ limit: '5' }),
    field: 'limit',
    mentions: /limit must be a number/u,
  },
  {
    name: 'limit far out of range',
    tool: 'memory_search',
    args: () => ({ limit: 1e12 }),
    field: 'limit',
    mentions: /at most 100/u,
  },
  { name: 'limit as an object', tool: 'account_info', args: () => ({ limit: {} }), field: 'limit' },
  {
    name: 'cache_minutes as a string',
    tool: 'data_fetch',
    args: () => ({ query_type: 'news', query: 'q', cache_minutes: '15' }),
    field: 'cache_minutes',
  },
  {
    name: 'query_type unknown',
    tool: 'data_fetch',
    args: () => ({ query_type: 'stocks', query: 'aapl' }),
    field: 'query_type',
  },
  {
    name: 'query as an array',
    tool: 'data_fetch',
    args: () => ({ query_type: 'news', query: ['a'] }),
    field: 'query',
  },
  // Unknown fields, constructor and prototype among them.
  {
    name: 'a misspelt field',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: 'v', memory_tyep: 'fact' }),
    mentions: /unknown field\(s\) memory_tyep; allowed fields: memory_key, memory_value/u,
  },
  {
    name: 'constructor as a field',
    tool: 'memory_store',
    args: () =>
      JSON.parse('{"memory_key":"k","memory_value":"v","constructor":{"prototype":{"polluted":true}}}'),
    mentions: /unknown field\(s\) constructor/u,
  },
  {
    name: 'prototype as a field',
    tool: 'memory_search',
    args: () => ({ prototype: { polluted: true } }),
    mentions: /unknown field\(s\) prototype/u,
  },
  {
    name: 'agent_key as a field (MCP takes the key from the connection)',
    tool: 'memory_search',
    args: () => ({ agent_key: 'ac_x' }),
    mentions: /unknown field\(s\) agent_key/u,
  },
  {
    name: '3,000 unknown fields, named in a bounded sentence',
    tool: 'account_info',
    args: () => Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`junk_${i}`, i])),
    mentions:
      /unknown field\(s\) junk_0, junk_1, junk_2, junk_3, junk_4 and 2995 more; allowed fields: limit/u,
  },
  // Lone surrogates, NUL and bidi controls.
  {
    name: 'a lone surrogate in memory_key',
    tool: 'memory_store',
    args: () => ({ memory_key: 'a\ud800', memory_value: 'v' }),
    field: 'memory_key',
    mentions: /lone UTF-16 surrogate/u,
  },
  {
    name: 'a lone surrogate in memory_value',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: '\udfff' }),
    field: 'memory_value',
  },
  {
    name: 'a lone surrogate deep in metadata',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: 'v', metadata: { a: { b: ['\ud83d'] } } }),
    field: 'metadata.a.b.0',
  },
  {
    name: 'a lone surrogate in a metadata key',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: 'v', metadata: { '\udc00': 1 } }),
    field: 'metadata',
    mentions: /has a key/u,
  },
  {
    name: 'a lone surrogate in a query',
    tool: 'data_fetch',
    args: () => ({ query_type: 'weather', query: 'Berlin\ud800' }),
    field: 'query',
  },
  {
    name: 'NUL in memory_key',
    tool: 'memory_retrieve',
    args: () => ({ memory_key: 'a\u0000b' }),
    field: 'memory_key',
    mentions: /control characters/u,
  },
  {
    name: 'a right-to-left override in memory_key',
    tool: 'memory_store',
    args: () => ({ memory_key: 'gpj.\u202eexe', memory_value: 'v' }),
    field: 'memory_key',
    mentions: /bidirectional/u,
  },
  {
    name: 'a bidi isolate in memory_key',
    tool: 'memory_delete',
    args: () => ({ memory_key: '\u2067k\u2069' }),
    field: 'memory_key',
    mentions: /bidirectional/u,
  },
  {
    name: 'NUL in a query',
    tool: 'data_fetch',
    args: () => ({ query_type: 'news', query: 'a\u0000b' }),
    field: 'query',
    mentions: /control characters/u,
  },
  // Deep nesting and huge strings.
  {
    name: 'metadata nested 1,000 deep (100,000 in-process on the 2025 era)',
    tool: 'memory_store',
    args: (depth) => ({ memory_key: 'k', memory_value: 'v', metadata: { a: nested(depth) } }),
    field: 'metadata',
    mentions: /nest deeper than 32/u,
  },
  {
    name: 'memory_value nested 1,000 deep (100,000 in-process on the 2025 era)',
    tool: 'memory_store',
    args: (depth) => ({ memory_key: 'k', memory_value: nested(depth) }),
    field: 'memory_value',
  },
  {
    name: 'a memory_value of 200 KB',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: 'x'.repeat(200_000) }),
    field: 'memory_value',
    mentions: /65536 bytes/u,
  },
  {
    name: 'a memory_key of 10,000 characters',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k'.repeat(10_000), memory_value: 'v' }),
    field: 'memory_key',
    mentions: /at most 256 characters/u,
  },
  {
    name: 'an empty memory_key',
    tool: 'memory_retrieve',
    args: () => ({ memory_key: '' }),
    field: 'memory_key',
    mentions: /empty/u,
  },
  {
    name: 'metadata of 100 KB',
    tool: 'memory_store',
    args: () => ({ memory_key: 'k', memory_value: 'v', metadata: { big: 'x'.repeat(100_000) } }),
    field: 'metadata',
    mentions: /8192 bytes/u,
  },
  {
    name: 'a query of 100,000 characters',
    tool: 'data_fetch',
    args: () => ({ query_type: 'search', query: 'q'.repeat(100_000) }),
    field: 'query',
    mentions: /at most 500/u,
  },
  {
    name: 'a missing required field',
    tool: 'memory_store',
    args: () => ({ memory_value: 'v' }),
    field: 'memory_key',
    mentions: /memory_key is required/u,
  },
];

async function expectInvalid(client: Client, row: Row, depth: number): Promise<void> {
  const res = await client.callTool({ name: row.tool, arguments: row.args(depth) });
  expect(res.isError, JSON.stringify(res).slice(0, 300)).toBe(true);
  const body = textJson(res);
  expect(body.code).toBe('invalid_input');
  expect(typeof body.error).toBe('string');
  expect(body.error.length).toBeGreaterThan(10);
  expect(body.error.length).toBeLessThan(400);
  if (row.field !== undefined) expect(body.field).toBe(row.field);
  if (row.mentions) expect(body.error).toMatch(row.mentions);
  expect(res.structuredContent).toBeUndefined();
}

interface Face {
  name: string;
  /** How deep the nesting rows go: the HTTP client's JSON.stringify overflows its stack far sooner. */
  depth: number;
  setUp(): Promise<{
    client: Client;
    other: () => Promise<Client>;
    balance: () => Promise<number>;
    state: () => Promise<unknown>;
  }>;
  tearDown(): Promise<void>;
}

function inProcessFace(): Face {
  let h: InProcess;
  return {
    name: 'in-process',
    // The 2025 era's in-memory pair passes objects as they are; the 2026-07-28 one goes through the SDK's HTTP
    // handler, whose client serializes the arguments (as over a socket).
    depth: TEST_ERA === 'legacy' ? 100_000 : 1_000,
    setUp: async () => {
      h = await openInProcess({ live: new FakeLiveSource() });
      const key = await h.register();
      const client = await h.connect(key);
      const { core, store } = h.service;
      const id = (await core.accounts.authenticate(key)).id;
      await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'existing', memory_value: 'v' },
      });
      return {
        client,
        other: async () => h.connect(await h.register()),
        balance: async () => (await core.accounts.authenticate(key)).balanceCents,
        state: async () => ({
          balance: (await core.accounts.authenticate(key)).balanceCents,
          ledger: await store.read((r) => r.listLedger(id, 1000)),
          memories: await store.read((r) => r.countMemories(id)),
        }),
      };
    },
    tearDown: () => h.close(),
  };
}

function httpFace(): Face {
  let server: TestServer;
  const clients: Client[] = [];
  const connect = async (key: string) => {
    const client = newClient({ name: 'hostile' });
    await client.connect(httpTransport(new URL(`${server.url}/mcp`), { 'X-API-Key': key }));
    clients.push(client);
    return client;
  };
  return {
    name: 'Streamable HTTP',
    depth: 1_000,
    setUp: async () => {
      server = await startTestServer({ live: new FakeLiveSource() });
      const key = await server.register();
      const client = await connect(key);
      const { core, store } = server.running.service;
      const id = (await core.accounts.authenticate(key)).id;
      await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'existing', memory_value: 'v' },
      });
      return {
        client,
        other: async () => connect(await server.register()),
        balance: async () => (await core.accounts.authenticate(key)).balanceCents,
        state: async () => ({
          balance: (await core.accounts.authenticate(key)).balanceCents,
          ledgerSum: await ledgerSum(server, key),
          ledger: await store.read((r) => r.listLedger(id, 1000)),
          memories: await store.read((r) => r.countMemories(id)),
        }),
      };
    },
    tearDown: async () => {
      for (const c of clients) await c.close().catch(() => undefined);
      await server.close();
    },
  };
}

for (const face of [inProcessFace(), httpFace()]) {
  describe(`hostile MCP tool arguments (${face.name})`, () => {
    let ctx: Awaited<ReturnType<Face['setUp']>>;
    let before: unknown;

    beforeAll(async () => {
      ctx = await face.setUp();
      before = await ctx.state();
      expect(await ctx.balance()).toBe(49);
    });
    afterAll(() => face.tearDown());

    for (const row of CATALOGUE) {
      it(`${row.tool}: ${row.name}`, () => expectInvalid(ctx.client, row, face.depth));
    }

    it('arguments that are not an object are refused by the SDK with a JSON-RPC error, not a crash', async () => {
      for (const args of [[1, 2], null, 'memory_key', 42]) {
        await expect(
          ctx.client.callTool({
            name: 'memory_store',
            arguments: args as unknown as Record<string, unknown>,
          }),
        ).rejects.toThrow(/params.*arguments|arguments.*expected record/su);
      }
    });

    it('an unknown tool is an isError result', async () => {
      const res = await ctx.client.callTool({ name: 'memory_steal', arguments: {} });
      expect(res.isError).toBe(true);
      expect(JSON.stringify(res.content)).toMatch(/Tool memory_steal not found/u);
    });

    it('__proto__ as an argument is dropped by the SDK before the tool sees it: it smuggles nothing', async () => {
      // account_info is free; a smuggled limit of 1 would show one entry instead of both.
      const res = await ctx.client.callTool({
        name: 'account_info',
        arguments: JSON.parse('{"__proto__":{"limit":1}}'),
      });
      expect(res.isError).toBeFalsy();
      expect((res.structuredContent as { recent_transactions: unknown[] }).recent_transactions).toHaveLength(
        2,
      );
    });

    it('__proto__ as a memory key and inside metadata is an ordinary key, seen by its agent only', async () => {
      const owner = await ctx.other();
      const metadata = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}';
      const stored = await owner.callTool({
        name: 'memory_store',
        arguments: JSON.parse(
          `{"memory_key":"__proto__","memory_value":"v\\u0000\\u202e","metadata":${metadata}}`,
        ),
      });
      expect(stored.isError, JSON.stringify(stored)).toBeFalsy();
      const got = await owner.callTool({ name: 'memory_retrieve', arguments: { memory_key: '__proto__' } });
      const memory = (got.structuredContent as { memory: { metadata: object; memory_value: string } }).memory;
      expect(memory.memory_value).toBe('v\u0000\u202e');
      expect(Object.keys(memory.metadata)).toEqual(['__proto__', 'constructor']);
      expect(JSON.stringify(memory.metadata)).toBe(JSON.stringify(JSON.parse(metadata)));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const stranger = await ctx.other();
      const theirs = await stranger.callTool({
        name: 'memory_retrieve',
        arguments: { memory_key: '__proto__' },
      });
      expect(textJson(theirs)).toMatchObject({ code: 'not_found' });
      expect(
        ((await owner.callTool({ name: 'account_info', arguments: {} })).structuredContent as any)
          .credit_balance_cents,
      ).toBe(48);
    });

    it('after the catalogue the server answers, and balance, ledger and memories are unchanged', async () => {
      if (TEST_ERA === 'legacy') await ctx.client.ping(); // 2026-07-28 has no ping
      expect((await ctx.client.listTools()).tools.length).toBeGreaterThan(0);
      expect(await ctx.state()).toEqual(before);
    });
  });
}

describe('raw JSON-RPC over HTTP /mcp', () => {
  let server: TestServer;
  let key: string;
  let session: Record<string, string>;

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
    key = await server.register();
    // No session is kept: a 2025 client initializes, then sends each message on its own with its version.
    const init = await rpc(JSON.stringify(initializeRequest()));
    expect(init.status).toBe(200);
    session = { 'mcp-protocol-version': '2025-06-18' };
    expect((await rpc('{"jsonrpc":"2.0","method":"notifications/initialized"}', session)).status).toBe(202);
  });
  afterAll(() => server.close());

  async function rpc(body: string, headers: Record<string, string> = {}) {
    const res = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-api-key': key,
        ...headers,
      },
      body,
    });
    const text = await res.text();
    // A JSON answer, or the one `data:` line of an SSE answer.
    const json = res.headers.get('content-type')?.startsWith('text/event-stream')
      ? JSON.parse(/^data: (.*)$/mu.exec(text)?.[1] ?? 'null')
      : JSON.parse(text || 'null');
    return { status: res.status, headers: res.headers, json };
  }

  function expectRpcError(
    res: Awaited<ReturnType<typeof rpc>>,
    status: number,
    code: number,
    mentions?: RegExp,
  ) {
    expect(res.status, JSON.stringify(res.json)).toBe(status);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } });
    expect(typeof res.json.error.message).toBe('string');
    if (mentions) expect(res.json.error.message).toMatch(mentions);
  }

  it('malformed JSON is a JSON-RPC parse error (-32700), with or without a session', async () => {
    const res = await rpc('{"jsonrpc": "2.0", "method": ');
    expectRpcError(res, 400, -32700, /not valid JSON/u);
    expect(res.json.error.data).toMatchObject({ code: 'invalid_json' });
    expectRpcError(await rpc('{"jsonrpc"', session), 400, -32700);
  });

  it('null as the body is a parse error', async () => {
    expectRpcError(await rpc('null', session), 400, -32700);
  });

  it('a batch of garbage is refused as invalid messages, with the version header or without', async () => {
    expectRpcError(await rpc('[1, "x", null, {}]'), 400, -32600);
    expectRpcError(await rpc('[1, "x", null, {}]', session), 400, -32600);
    expectRpcError(await rpc('{"jsonrpc":"2.0","id":7}', session), 400, -32600);
  });

  it('a body over the limit or not JSON is a JSON-RPC error with the HTTP status and the REST sentence', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'ping',
      params: { pad: 'x'.repeat(300_000) },
    });
    const tooLarge = await rpc(big, session);
    expectRpcError(tooLarge, 413, -32600, /262144 bytes/u);
    expect(tooLarge.json.error.data).toMatchObject({ code: 'payload_too_large' });
    const text = await rpc('{}', { ...session, 'content-type': 'text/plain' });
    expectRpcError(text, 415, -32600, /Content-Type: application\/json/u);
  });

  it('arguments nested 100,000 deep: an isError result, not a stack overflow', async () => {
    const body = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_store","arguments":{"memory_key":"k","memory_value":"v","metadata":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}}`;
    const res = await rpc(body, session);
    expect(res.status).toBe(200);
    expect(res.json.result.isError).toBe(true);
    expect(JSON.parse(res.json.result.content[0].text)).toMatchObject({
      code: 'invalid_input',
      field: 'metadata',
    });
  });

  it('arguments as an array: a JSON-RPC error for that call', async () => {
    const res = await rpc(
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_store","arguments":[1]}}',
      session,
    );
    expect(res.json).toMatchObject({
      jsonrpc: '2.0',
      id: 4,
      error: { message: expect.stringMatching(/arguments/u) },
    });
  });

  it('the session and the server still work, and nothing was charged', async () => {
    const res = await rpc(
      '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"account_info","arguments":{}}}',
      session,
    );
    expect(res.json.result.structuredContent).toMatchObject({ credit_balance_cents: 50 });
    expect((await server.request('GET', '/api/ac/ping')).status).toBe(200);
    expect(await ledgerSum(server, key)).toBe(50);
  });
});
