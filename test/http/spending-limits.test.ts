/**
 * Spending controls: the per-agent daily limit (AC_DAILY_SPEND_LIMIT_CENTS) with its own 402, and
 * max_cost_cents on data requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ledgerSum, ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

describe('daily spending limit', () => {
  let server: TestServer;
  const live = new FakeLiveSource();
  // 22:00 UTC, so that the day ends two hours later.
  const clock = new ManualClock(Date.parse('2026-11-21T22:00:00.000Z'));

  beforeAll(async () => {
    server = await startTestServer({ live, clock, env: { AC_DAILY_SPEND_LIMIT_CENTS: '5' } });
  });
  afterAll(() => server.close());

  const store = (key: string, memoryKey: string) =>
    server.request('POST', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: memoryKey, memory_value: 'v' },
    });
  const data = (key: string, query: string, extra: object = {}) =>
    server.request('POST', '/api/ac/data', {
      key,
      body: { agent_key: key, query_type: 'news', query, ...extra },
    });

  it('stops an agent at the limit with its own 402, charges nothing, and resets at midnight UTC', async () => {
    const key = await server.register();
    for (let i = 0; i < 3; i++) expect((await store(key, `k${i}`)).status).toBe(200);
    expect((await data(key, 'first')).status).toBe(200); // 3 + 2 = 5: exactly the limit
    const refused = await store(key, 'k3');
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({
      code: 'daily_limit_reached',
      daily_limit_cents: 5,
      spent_today_cents: 5,
      required_cents: 1,
      resets_at: '2026-11-22T00:00:00.000Z',
    });
    expect(refused.body.error).toMatch(/per day; nothing was charged.*resets at 2026-11-22T00:00:00.000Z/);
    // Free operations still work: cached data and delete.
    const cached = await data(key, 'first');
    expect(cached.body).toMatchObject({ from_cache: true, cost_cents: 0 });
    const deleted = await server.request('DELETE', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: 'k0' },
    });
    expect(deleted.status).toBe(200);
    const fresh = await data(key, 'second');
    expect(fresh.status).toBe(402);
    expect(fresh.body.code).toBe('daily_limit_reached');
    expect(live.calls.filter((c) => c.query === 'second')).toHaveLength(0); // refused before the upstream
    expect(await ledgerSum(server, key)).toBe(45);

    clock.advance(2 * 3600_000); // 00:00 UTC the next day
    expect((await store(key, 'k4')).status).toBe(200);
  });

  it('counts per agent: one agent at its limit does not stop another', async () => {
    const a = await server.register();
    const b = await server.register();
    for (let i = 0; i < 5; i++) await store(a, `a${i}`);
    expect((await store(a, 'over')).status).toBe(402);
    expect((await store(b, 'fine')).status).toBe(200);
  });

  it('parallel fresh fetches cannot overshoot the limit: reservations count', async () => {
    const key = await server.register();
    await store(key, 'x'); // 1 spent, 4 left: room for two fresh fetches of 2
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => data(key, `parallel ${i}`, { cache_minutes: 0 })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 402)).toHaveLength(4);
    expect(await ledgerSum(server, key)).toBe(45);
  });
});

describe('max_cost_cents', () => {
  let server: TestServer;
  const live = new FakeLiveSource();

  beforeAll(async () => {
    server = await startTestServer({ live });
  });
  afterAll(() => server.close());

  const data = (key: string, query: string, extra: object = {}) =>
    server.request('POST', '/api/ac/data', {
      key,
      body: { agent_key: key, query_type: 'weather', query, ...extra },
    });

  it('0 means cached or nothing: 402 max_cost_exceeded without calling the upstream, then free from cache', async () => {
    const key = await server.register();
    const refused = await data(key, 'oslo', { max_cost_cents: 0 });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'max_cost_exceeded', required_cents: 2, max_cost_cents: 0 });
    expect(refused.body.error).toMatch(/Raise max_cost_cents/);
    expect(live.calls).toHaveLength(0);
    expect((await data(key, 'oslo', { max_cost_cents: 2 })).body).toMatchObject({ cost_cents: 2 });
    const cached = await data(key, 'oslo', { max_cost_cents: 0 });
    expect(cached.status).toBe(200);
    expect(cached.body).toMatchObject({ from_cache: true, cost_cents: 0 });
    expect(await ledgerSum(server, key)).toBe(48);
  });

  it('rejects a negative or non-integer max_cost_cents with 400', async () => {
    const key = await server.register();
    for (const bad of [-1, 1.5, '2']) {
      const res = await data(key, 'bergen', { max_cost_cents: bad });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_input', field: 'max_cost_cents' });
    }
  });
});
