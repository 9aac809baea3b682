/** Every MCP tool, its schemas and hints, and every error path, over the SDK client in-process. */

import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { type McpClient as Client, TEST_ERA } from '../helpers/mcp-era.js';
import { type InProcess, openInProcess, textJson } from './mcp-harness.js';

describe('MCP tools', () => {
  let h: InProcess;
  let key: string;
  let client: Client;
  const live = new FakeLiveSource();

  beforeAll(async () => {
    h = await openInProcess({ live, env: { AC_MEMORIES_PER_AGENT: '5' } });
    key = await h.register();
    client = await h.connect(key);
  });
  afterAll(() => h.close());

  const call = (name: string, args: Record<string, unknown>, c = client) =>
    c.callTool({ name, arguments: args });

  it('lists the nine tools with descriptions, schemas and truthful hints', async () => {
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(
      [
        'account_info',
        'data_fetch',
        'memory_delete',
        'memory_history',
        'memory_import',
        'memory_restore',
        'memory_retrieve',
        'memory_search',
        'memory_store',
        'memory_store_batch',
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.description).toMatch(/Cost: \d+ cents/);
      if (tool.name === 'memory_store_batch' || tool.name === 'memory_import')
        expect(tool.description).toMatch(/Cost: 1 cents per memory\./);
      expect(tool.description).toMatch(/error/);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.inputSchema.properties?.agent_key).toBeUndefined();
    }
    expect(byName.memory_store?.inputSchema.required).toEqual(['memory_key', 'memory_value']);
    const hints = (name: string) => byName[name]?.annotations;
    expect(hints('memory_retrieve')).toMatchObject({ readOnlyHint: true });
    expect(hints('memory_search')).toMatchObject({ readOnlyHint: true });
    expect(hints('memory_history')).toMatchObject({ readOnlyHint: true });
    expect(hints('memory_restore')).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(hints('account_info')).toMatchObject({ readOnlyHint: true });
    expect(hints('memory_store')).toMatchObject({ readOnlyHint: false, idempotentHint: true });
    expect(hints('memory_delete')).toMatchObject({
      readOnlyHint: false,
      idempotentHint: true,
      destructiveHint: true,
    });
    expect(hints('data_fetch')).toMatchObject({ openWorldHint: true });
    expect(hints('memory_store')?.openWorldHint).toBe(false);
  });

  it('stores, retrieves, searches and deletes, with structuredContent equal to the REST body and the same JSON as text', async () => {
    const stored = await call('memory_store', {
      memory_key: 'k',
      memory_value: 'v',
      memory_type: 'fact',
      metadata: { a: 1 },
    });
    expect(stored.isError).toBeFalsy();
    expect(stored.structuredContent).toMatchObject({
      success: true,
      created: true,
      cost_cents: 1,
      credit_balance_cents: 49,
    });
    expect(textJson(stored)).toEqual(stored.structuredContent);

    const got = await call('memory_retrieve', { memory_key: 'k' });
    expect(got.structuredContent).toMatchObject({
      success: true,
      memory: { memory_key: 'k', memory_value: 'v', memory_type: 'fact', metadata: { a: 1 } },
      cost_cents: 1,
      credit_balance_cents: 48,
    });
    const list = await call('memory_search', { memory_type: 'fact' });
    expect(list.structuredContent).toMatchObject({ count: 1, cost_cents: 1, credit_balance_cents: 47 });
    const del = await call('memory_delete', { memory_key: 'k' });
    expect(del.structuredContent).toEqual({
      success: true,
      deleted: true,
      memory_key: 'k',
      cost_cents: 0,
      credit_balance_cents: 47,
    });
  });

  it('fetches live data and shows the account with recent ledger entries', async () => {
    const data = await call('data_fetch', { query_type: 'news', query: 'MCP' });
    expect(data.structuredContent).toMatchObject({
      success: true,
      from_cache: false,
      cost_cents: 2,
      source: 'fake',
    });
    const cached = await call('data_fetch', { query_type: 'news', query: 'mcp' });
    expect(cached.structuredContent).toMatchObject({ from_cache: true, cost_cents: 0 });
    const info = await call('account_info', { limit: 2 });
    expect(info.structuredContent).toMatchObject({ plan: 'pay-as-you-go', credit_balance_cents: 45 });
    const recent = (info.structuredContent as { recent_transactions: { operation: string }[] })
      .recent_transactions;
    expect(recent.map((t) => t.operation)).toEqual(['data', 'memory_search']);
  });

  it('data_fetch takes cache_minutes -1 (cached only) and says cache_state and cached_at, free', async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'data_fetch');
    expect(tool?.inputSchema.properties?.cache_minutes).toMatchObject({
      type: 'integer',
      minimum: -1,
      maximum: 1440,
    });
    // One shape per query_type (issue 33), each with the fields every answer has.
    const shapes = (tool?.outputSchema as { oneOf?: Record<string, any>[] } | undefined)?.oneOf ?? [];
    expect(shapes.map((shape) => shape.properties?.query_type?.const)).toEqual([
      'news',
      'search',
      'weather',
      'price',
    ]);
    for (const shape of shapes) {
      expect(shape.properties?.cache_state).toMatchObject({
        enum: ['fresh', 'hit', 'stale', 'shared_flight'],
      });
      expect(shape.properties?.cached_at).toBeDefined();
      expect(shape.required).toEqual(
        expect.arrayContaining(['query_type', 'data', 'cache_state', 'cached_at']),
      );
    }
    expect(tool?.description).toMatch(/-1 means cached only/);
    const calls = live.calls.length;
    const cached = await call('data_fetch', { query_type: 'news', query: 'mcp', cache_minutes: -1 });
    expect(cached.isError).toBeFalsy();
    expect(cached.structuredContent).toMatchObject({
      from_cache: true,
      cost_cents: 0,
      credit_balance_cents: 45,
      cache_state: 'hit',
    });
    const body = cached.structuredContent as { cached_at: string; fetched_at: string };
    expect(body.cached_at).toBe(body.fetched_at);
    const missing = await call('data_fetch', { query_type: 'news', query: 'never', cache_minutes: -1 });
    expect(missing.isError).toBe(true);
    expect(textJson(missing)).toMatchObject({ code: 'not_cached' });
    expect(live.calls.length).toBe(calls);
  });

  it('answers a missing key with how to register and pass one', async () => {
    const anonymous = await h.connect(undefined);
    const res = await call('memory_store', { memory_key: 'k', memory_value: 'v' }, anonymous);
    expect(res.isError).toBe(true);
    const body = textJson(res);
    expect(body.code).toBe('unauthorized');
    expect(body.error).toMatch(/Missing API key.*register.*X-API-Key.*AC_API_KEY/);
  });

  it('answers an unknown key as unauthorized', async () => {
    const wrong = await h.connect('ac_not-a-real-key');
    const body = textJson(await call('account_info', {}, wrong));
    expect(body.code).toBe('unauthorized');
    expect(body.error).toMatch(/^Unknown API key/);
  });

  it('answers bad arguments with the REST error body naming the field, charging nothing', async () => {
    const res = await call('memory_store', { memory_key: 5, memory_value: 'v' });
    expect(res.isError).toBe(true);
    expect(textJson(res)).toMatchObject({ code: 'invalid_input', field: 'memory_key' });
    const unknown = textJson(await call('memory_search', { limt: 3 }));
    expect(unknown).toMatchObject({ code: 'invalid_input' });
    expect(unknown.error).toMatch(/unknown field\(s\) limt; allowed fields: memory_type, limit/);
    const range = textJson(
      await call('data_fetch', { query_type: 'weather', query: 'x', cache_minutes: -2 }),
    );
    expect(range).toMatchObject({ code: 'invalid_input', field: 'cache_minutes' });
    expect(range.error).toMatch(/cache_minutes must be -1 \(cached only\) or from 0 to 1440/);
    const info = await call('account_info', {});
    expect((info.structuredContent as { credit_balance_cents: number }).credit_balance_cents).toBe(45);
  });

  it('answers 404 and quota as isError bodies, free', async () => {
    const missing = textJson(await call('memory_retrieve', { memory_key: 'nope' }));
    expect(missing).toMatchObject({ code: 'not_found', memory_key: 'nope' });
    expect(missing.error).toMatch(/memory_search/);
    for (const k of ['a', 'b', 'c', 'd', 'e'])
      await call('memory_store', { memory_key: k, memory_value: 'v' });
    const full = textJson(await call('memory_store', { memory_key: 'f', memory_value: 'v' }));
    expect(full.code).toBe('quota_exceeded');
  });

  it('answers 402 with the price and the balance', async () => {
    const poor = await h.register();
    const c = await h.connect(poor);
    for (let i = 0; i < 25; i++)
      await call('data_fetch', { query_type: 'price', query: `coin${i}`, cache_minutes: 0 }, c);
    const res = await call('memory_store', { memory_key: 'x', memory_value: 'y' }, c);
    expect(res.isError).toBe(true);
    expect(textJson(res)).toMatchObject({
      code: 'insufficient_credits',
      required_cents: 1,
      credit_balance_cents: 0,
    });
  });

  it('answers upstream failures as isError bodies, free', async () => {
    live.failWith('upstream_timeout');
    const res = await call('data_fetch', { query_type: 'weather', query: 'slowtown' });
    live.next = undefined;
    expect(textJson(res)).toMatchObject({ code: 'upstream_timeout' });
  });

  it('offers the account and memories as resources: listing free, reading a memory charged like a retrieve', async () => {
    const fresh = await h.register();
    const c = await h.connect(fresh);
    await call('memory_store', { memory_key: 'notes/today', memory_value: 'hello' }, c);
    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      'ac://memories.ndjson',
      'ac://account',
      'ac://usage',
      'ac://memory/notes%2Ftoday',
    ]);
    const account = await c.readResource({ uri: 'ac://account' });
    expect(JSON.parse((account.contents[0] as { text: string }).text)).toMatchObject({
      credit_balance_cents: 49,
    });
    const memory = await c.readResource({ uri: 'ac://memory/notes%2Ftoday' });
    expect(JSON.parse((memory.contents[0] as { text: string }).text)).toMatchObject({
      memory: { memory_key: 'notes/today', memory_value: 'hello' },
      cost_cents: 1,
      credit_balance_cents: 48,
    });
    // Usage, free: the store and the read above, and a live-data answer fetched then served from the cache.
    await call('data_fetch', { query_type: 'weather', query: 'usage town' }, c);
    await call('data_fetch', { query_type: 'weather', query: 'usage town' }, c);
    const usage = JSON.parse(
      ((await c.readResource({ uri: 'ac://usage' })).contents[0] as { text: string }).text,
    );
    expect(usage.days).toHaveLength(30);
    expect(usage.operations).toEqual([
      { operation: 'data', charges: 1, spent_cents: 2 },
      { operation: 'memory_retrieve', charges: 1, spent_cents: 1 },
      { operation: 'memory_store', charges: 1, spent_cents: 1 },
    ]);
    expect(usage.live_data).toMatchObject({ answers: 2, fresh: 1, hit: 1, cache_hit_rate: 0.5 });
    expect(usage.credit_balance_cents).toBe(46);
    await expect(c.readResource({ uri: 'ac://memory/absent' })).rejects.toThrow(
      /No memory with memory_key "absent"/,
    );
    const anonymous = await h.connect(undefined);
    expect((await anonymous.listResources()).resources.map((r) => r.uri)).toEqual([
      'ac://memories.ndjson',
      'ac://account',
      'ac://usage',
    ]);
    await expect(anonymous.readResource({ uri: 'ac://account' })).rejects.toThrow(/Missing API key/);
    await expect(anonymous.readResource({ uri: 'ac://usage' })).rejects.toThrow(/Missing API key/);
  });

  it('declares logging, sends logs only to a connection that asked, and offers a prompt', async () => {
    expect(client.getServerCapabilities()?.logging).toEqual({});
    if (TEST_ERA === 'legacy') {
      // 2026-07-28 asks per request, over the wire: modern-era.test.ts.
      const c = await h.connect(key);
      const logs: unknown[] = [];
      c.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        logs.push(n.params);
      });
      await call('account_info', {}, c);
      expect(logs).toEqual([]);
      await c.setLoggingLevel('warning');
      await call('account_info', {}, c);
      await call('memory_retrieve', { memory_key: 'never-stored' }, c);
      expect(logs).toEqual([
        {
          level: 'warning',
          logger: 'agent-context',
          data: expect.objectContaining({ tool: 'memory_retrieve', outcome: 'not_found' }),
        },
      ]);
    }
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['recall']);
    const prompt = await client.getPrompt({ name: 'recall', arguments: { topic: 'travel' } });
    expect(JSON.stringify(prompt.messages)).toContain('memory_search');
  });
});
