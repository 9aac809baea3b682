/**
 * memory_store_batch (issue 15) on REST, on both stores (AC_TEST_STORE=postgres runs this file on
 * PostgreSQL): up to 100 memories in one call, priced per memory, all stored or none; a failing item (a
 * condition, the quota, the balance) fails the batch, names the item and costs nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { AC_MEMORIES_PER_AGENT: '5' } });
});
afterAll(async () => {
  await server.close();
});

const batch = (key: string, memories: unknown) =>
  server.request('POST', '/api/ac/memory/batch', { key, body: { agent_key: key, memories } });
const keys = async (key: string) =>
  (await server.request('POST', '/api/ac/memory/search', { key, body: { agent_key: key } })).body.memories
    .map((m: { memory_key: string }) => m.memory_key)
    .sort();
const balance = async (key: string) =>
  (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;

describe('memory_store_batch (REST)', () => {
  it('stores every memory in one call, charging the price per memory once', async () => {
    const key = await server.register();
    await server.request('POST', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: 'b', memory_value: 'old' },
    });
    const res = await batch(key, [
      { memory_key: 'a', memory_value: '1', memory_type: 'fact', metadata: { n: 1 } },
      { memory_key: 'b', memory_value: '2', expected_version: 1 },
      { memory_key: 'c', memory_value: '3', ttl_seconds: 60 },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ count: 3, cost_cents: 3, credit_balance_cents: 50 - 1 - 3 });
    expect(res.body.results.map((r: { created: boolean }) => r.created)).toEqual([true, false, true]);
    expect(res.body.results[1].memory).toMatchObject({ memory_key: 'b', memory_value: '2', version: 2 });
    expect(res.body.results[2].memory.expires_at).not.toBeNull();
    expect(await keys(key)).toEqual(['a', 'b', 'c']);
    // One ledger entry for the batch (before the list's).
    const ledger = await server.request('GET', '/api/ac/account/transactions', { key });
    expect(ledger.body.transactions[1]).toMatchObject({ operation: 'memory_store_batch', amount_cents: -3 });
    expect(await ledgerSum(server, key)).toBe(50 - 1 - 3 - 1);
  });

  it('a failing condition fails the whole batch, naming the memory, and charges nothing', async () => {
    const key = await server.register();
    await batch(key, [{ memory_key: 'x', memory_value: '1' }]);
    const res = await batch(key, [
      { memory_key: 'new', memory_value: 'n' },
      { memory_key: 'x', memory_value: 'lost', expected_version: 7 },
    ]);
    expect(res.status).toBe(412);
    expect(res.body).toMatchObject({ code: 'version_conflict', memory_key: 'x', current_version: 1 });
    expect(await keys(key)).toEqual(['x']);
    expect(await balance(key)).toBe(49 - 1);
  });

  it('past the quota, or past the balance, none is stored and nothing is charged', async () => {
    const key = await server.register();
    const five = Array.from({ length: 5 }, (_, i) => ({ memory_key: `k${i}`, memory_value: 'v' }));
    const over = await batch(key, [...five, { memory_key: 'k5', memory_value: 'v' }]);
    expect(over.status).toBe(403);
    expect(over.body.code).toBe('quota_exceeded');
    expect(await keys(key)).toEqual([]);
    expect((await batch(key, five)).status).toBe(200);

    // The balance is checked for the whole batch: with 5 cents left, 6 memories are refused (402) and 5 fit.
    const poor = await server.register();
    for (let i = 0; i < 9; i++) await batch(poor, five);
    expect(await balance(poor)).toBe(5);
    const six = five
      .map((m) => ({ ...m, memory_value: 'w' }))
      .concat({ memory_key: 'k0x', memory_value: 'v' });
    const short = await batch(poor, six);
    expect(short.status).toBe(402);
    expect(short.body).toMatchObject({
      code: 'insufficient_credits',
      required_cents: 6,
      credit_balance_cents: 5,
    });
    expect((await batch(poor, five)).status).toBe(200);
    expect(await balance(poor)).toBe(0);
  });

  it('an empty, oversized or malformed batch is a 400 that names what is wrong', async () => {
    const key = await server.register();
    const cases: [unknown, RegExp][] = [
      [[], /at least one/],
      [Array.from({ length: 101 }, (_, i) => ({ memory_key: `m${i}`, memory_value: 'v' })), /at most 100/],
      [
        [
          { memory_key: 'a', memory_value: 'v' },
          { memory_key: 'a', memory_value: 'w' },
        ],
        /once in a batch/,
      ],
      [[{ memory_key: '', memory_value: 'v' }], /memory_key must not be empty/],
      [[{ memory_key: 'a' }], /memory_value/],
      ['not a list', /memories/],
    ];
    for (const [memories, message] of cases) {
      const res = await batch(key, memories);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    expect(await balance(key)).toBe(50);
  });
});
