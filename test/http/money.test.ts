/** The ledger's promises: exact costs, no charge on failure, never negative, balance = sum of entries. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';

describe('money', () => {
  let server: TestServer;
  const live = new FakeLiveSource();

  beforeAll(async () => {
    server = await startTestServer({ live, env: { AC_ADMIN_TOKEN: 'operator-token-0123456789' } });
  });
  afterAll(() => server.close());

  const balance = async (key: string) =>
    (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;

  it('100 parallel stores with 50 cents: exactly 50 succeed, 50 get 402, the balance ends at 0', async () => {
    const key = await server.register();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        server.request('POST', '/api/ac/memory', {
          key,
          body: { agent_key: key, memory_key: `k${i}`, memory_value: `v${i}` },
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 402)).toHaveLength(50);
    expect(await balance(key)).toBe(0);
    expect(await ledgerSum(server, key)).toBe(0);
    const list = await server.request('POST', '/api/ac/memory/search', { key, body: { agent_key: key } });
    expect(list.status).toBe(402);
    // Every acknowledged store is there: the memories that got 200 are exactly the stored ones.
    const stored = results.filter((r) => r.status === 200).map((r) => r.body.memory.memory_key);
    expect(new Set(stored).size).toBe(50);
    const balances = results.filter((r) => r.status === 200).map((r) => r.body.credit_balance_cents);
    expect(new Set(balances).size).toBe(50); // each success saw its own balance: 49 down to 0
    expect(Math.min(...balances)).toBe(0);
  });

  it('parallel mixed paid operations keep balance = starter credit - debits, never negative', async () => {
    const key = await server.register();
    const ops = Array.from({ length: 60 }, (_, i) => {
      switch (i % 4) {
        case 0:
          return server.request('POST', '/api/ac/memory', {
            key,
            body: { agent_key: key, memory_key: `m${i % 8}`, memory_value: 'v' },
          });
        case 1:
          return server.request('GET', '/api/ac/memory', {
            key,
            query: { agent_key: key, memory_key: `m${(i - 1) % 8}` },
          });
        case 2:
          return server.request('POST', '/api/ac/memory/search', { key, body: { agent_key: key, limit: 5 } });
        default:
          return server.request('POST', '/api/ac/data', {
            key,
            body: { agent_key: key, query_type: 'news', query: `q${i}`, cache_minutes: 0 },
          });
      }
    });
    const results = await Promise.all(ops);
    const charged = results.filter((r) => r.status === 200).reduce((sum, r) => sum + r.body.cost_cents, 0);
    for (const r of results) expect([200, 402, 404]).toContain(r.status);
    const final = await balance(key);
    expect(final).toBeGreaterThanOrEqual(0);
    expect(final).toBe(50 - charged);
    expect(await ledgerSum(server, key)).toBe(final);
  });

  it('top-up by the operator adds a top_up entry; wrong or missing token is 401', async () => {
    const key = await server.register('topup@example.com');
    const bad = await server.request('POST', '/api/ac/admin/credits', {
      bearer: 'wrong-token-0123456789',
      body: { email: 'topup@example.com', cents: 100 },
    });
    expect(bad.status).toBe(401);
    const none = await server.request('POST', '/api/ac/admin/credits', {
      body: { email: 'topup@example.com', cents: 100 },
    });
    expect(none.status).toBe(401);
    const agentKey = await server.request('POST', '/api/ac/admin/credits', {
      bearer: key,
      body: { email: 'topup@example.com', cents: 100 },
    });
    expect(agentKey.status).toBe(401);
    expect(await balance(key)).toBe(50);

    const ok = await server.request('POST', '/api/ac/admin/credits', {
      bearer: 'operator-token-0123456789',
      body: { email: 'TopUp@Example.com', cents: 125 },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({
      success: true,
      email: 'topup@example.com',
      credited_cents: 125,
      credit_balance_cents: 175,
    });
    const tx = await server.request('GET', '/api/ac/account/transactions', { key });
    expect(tx.body.transactions[0]).toMatchObject({
      operation: 'top_up',
      amount_cents: 125,
      balance_after_cents: 175,
    });
    expect(tx.body.transactions[1]).toMatchObject({
      operation: 'starter_credit',
      amount_cents: 50,
      balance_after_cents: 50,
    });
    expect(await ledgerSum(server, key)).toBe(175);

    const unknown = await server.request('POST', '/api/ac/admin/credits', {
      bearer: 'operator-token-0123456789',
      body: { email: 'nobody@example.com', cents: 5 },
    });
    expect(unknown.status).toBe(404);
    const negative = await server.request('POST', '/api/ac/admin/credits', {
      bearer: 'operator-token-0123456789',
      body: { email: 'topup@example.com', cents: -5 },
    });
    expect(negative.status).toBe(400);
    expect(await balance(key)).toBe(175);
  });
});
