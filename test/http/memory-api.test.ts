import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('memory operations over REST', () => {
  let server: TestServer;
  const clock = new ManualClock();
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ clock });
    key = await server.register();
  });
  afterAll(() => server.close());

  const store = (body: Record<string, unknown>, k = key) =>
    server.request('POST', '/api/ac/memory', { key: k, body: { agent_key: k, ...body } });

  it('registers with 50 cents on a pay-as-you-go plan, normalising the e-mail', async () => {
    const res = await server.request('POST', '/api/ac/register', {
      body: { email: '  New.Agent@Example.COM ', name: 'Scout' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      credit_balance_cents: 50,
      plan: 'pay-as-you-go',
      email: 'new.agent@example.com',
      name: 'Scout',
    });
    expect(res.body.agent_key).toMatch(/^ac_[A-Za-z0-9_-]{43}$/);
    const account = await server.request('GET', '/api/ac/account', { key: res.body.agent_key });
    expect(account.body).toEqual({
      email: 'new.agent@example.com',
      name: 'Scout',
      plan: 'pay-as-you-go',
      credit_balance_cents: 50,
      created_at: clock.now().toISOString(),
    });
  });

  it('stores a new memory for 1 cent with defaults, then updates it keeping created_at', async () => {
    const first = await store({ memory_key: 'greeting', memory_value: 'hello' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      memory: {
        memory_key: 'greeting',
        memory_value: 'hello',
        memory_type: 'context',
        metadata: {},
        created_at: clock.now().toISOString(),
        updated_at: clock.now().toISOString(),
        version: 1,
        expires_at: null,
      },
      created: true,
      cost_cents: 1,
      credit_balance_cents: 49,
    });
    const createdAt = first.body.memory.created_at;
    clock.advance(60_000);
    const second = await store({
      memory_key: 'greeting',
      memory_value: 'hi again',
      memory_type: 'preference',
      metadata: { lang: 'en', nested: { a: [1, 2] } },
    });
    expect(second.status).toBe(200);
    expect(second.body.created).toBe(false);
    expect(second.body.credit_balance_cents).toBe(48);
    expect(second.body.memory).toMatchObject({
      memory_value: 'hi again',
      memory_type: 'preference',
      metadata: { lang: 'en', nested: { a: [1, 2] } },
      created_at: createdAt,
      updated_at: clock.now().toISOString(),
      version: 2,
    });
  });

  it('retrieves a memory for 1 cent with the key in the query string, by either header', async () => {
    const res = await server.request('GET', '/api/ac/memory', {
      bearer: key,
      query: { agent_key: key, memory_key: 'greeting' },
    });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.memory.memory_value).toBe('hi again');
    expect(res.body.memory.created_at).toMatch(ISO);
    expect(res.body.cost_cents).toBe(1);
    expect(res.body.credit_balance_cents).toBe(47);
  });

  it('treats __proto__, constructor and toString as ordinary memory keys', async () => {
    for (const k of ['__proto__', 'constructor', 'toString', 'value']) {
      const res = await store({ memory_key: k, memory_value: `v-${k}`, metadata: { __proto__x: 1 } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.created).toBe(true);
    }
    const meta = await store({
      memory_key: 'meta',
      memory_value: 'm',
      metadata: JSON.parse('{"__proto__":{"x":1}}'),
    });
    expect(meta.status).toBe(200);
    expect(meta.text).toContain('"metadata":{"__proto__":{"x":1}}');
    for (const k of ['__proto__', 'constructor', 'toString', 'value']) {
      const res = await server.request('GET', '/api/ac/memory', {
        key,
        query: { agent_key: key, memory_key: k },
      });
      expect(res.status).toBe(200);
      expect(res.body.memory.memory_value).toBe(`v-${k}`);
    }
  });

  it('lists memories most recently updated first, filtered by type, at most limit', async () => {
    const other = await server.register();
    for (const [i, type] of ['fact', 'context', 'fact', 'workflow', 'fact'].entries()) {
      clock.advance(1000);
      const res = await store({ memory_key: `k${i}`, memory_value: `v${i}`, memory_type: type }, other);
      expect(res.status).toBe(200);
    }
    clock.advance(1000);
    await store({ memory_key: 'k0', memory_value: 'v0 updated', memory_type: 'fact' }, other);

    const all = await server.request('POST', '/api/ac/memory/search', {
      key: other,
      body: { agent_key: other },
    });
    expect(all.status).toBe(200);
    expect(all.body.memories.map((m: { memory_key: string }) => m.memory_key)).toEqual([
      'k0',
      'k4',
      'k3',
      'k2',
      'k1',
    ]);
    expect(all.body.count).toBe(5);
    expect(all.body.cost_cents).toBe(1);

    const facts = await server.request('POST', '/api/ac/memory/search', {
      key: other,
      body: { agent_key: other, memory_type: 'fact', limit: 2 },
    });
    expect(facts.body.memories.map((m: { memory_key: string }) => m.memory_key)).toEqual(['k0', 'k4']);
    expect(facts.body.count).toBe(2);
    expect(facts.body.credit_balance_cents).toBe(50 - 6 - 2);
  });

  it("never shows one agent another agent's memories", async () => {
    const other = await server.register();
    const res = await server.request('GET', '/api/ac/memory', {
      key: other,
      query: { agent_key: other, memory_key: 'greeting' },
    });
    expect(res.status).toBe(404);
    const list = await server.request('POST', '/api/ac/memory/search', {
      key: other,
      body: { agent_key: other },
    });
    expect(list.body.memories).toEqual([]);
  });

  it('deletes a memory for free; a second delete is 404', async () => {
    const before = (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents;
    const res = await server.request('DELETE', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: 'greeting' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      deleted: true,
      memory_key: 'greeting',
      cost_cents: 0,
      credit_balance_cents: before,
    });
    const again = await server.request('DELETE', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: 'greeting' },
    });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('not_found');
    const gone = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'greeting' },
    });
    expect(gone.status).toBe(404);
  });

  it('lists ledger entries newest first with what each concerned', async () => {
    const fresh = await server.register();
    await store({ memory_key: 'a', memory_value: '1' }, fresh);
    await server.request('GET', '/api/ac/memory', {
      key: fresh,
      query: { agent_key: fresh, memory_key: 'a' },
    });
    const res = await server.request('GET', '/api/ac/account/transactions', {
      key: fresh,
      query: { limit: '2' },
    });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(2);
    expect(res.body.credit_balance_cents).toBe(48);
    const [newest, older] = res.body.transactions;
    expect(newest).toMatchObject({
      operation: 'memory_retrieve',
      amount_cents: -1,
      balance_after_cents: 48,
      memory_key: 'a',
    });
    expect(older).toMatchObject({
      operation: 'memory_store',
      amount_cents: -1,
      balance_after_cents: 49,
      memory_key: 'a',
    });
    expect(newest.id).toMatch(/^txn_/);
    expect(newest.at).toMatch(ISO);
  });
});
