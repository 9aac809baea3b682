/**
 * GET /api/ac/account/usage (spending per day and per operation, today against the daily limit, how live
 * data was served) and the ledger's pages (GET /api/ac/account/transactions with cursor), on the store this
 * run uses. The clock is injected: charges land on the days the test chooses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

const DAY = 86_400_000;

describe('account usage', () => {
  let server: TestServer;
  const clock = new ManualClock(Date.parse('2026-11-21T12:00:00.000Z'));
  const live = new FakeLiveSource();

  beforeAll(async () => {
    server = await startTestServer({ clock, live, env: { AC_DAILY_SPEND_LIMIT_CENTS: '40' } });
  });
  afterAll(() => server.close());

  const store = (key: string, memoryKey: string) =>
    server.request('POST', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: memoryKey, memory_value: 'v', memory_type: 'fact' },
    });
  const usage = (key: string, query: Record<string, string> = {}) =>
    server.request('GET', '/api/ac/account/usage', { key, query });

  it('sums charges per UTC day and per operation, today last, credits left out', async () => {
    const key = await server.register();
    await store(key, 'a'); // 2026-11-21
    clock.advance(2 * DAY); // 2026-11-23
    await store(key, 'b');
    await server.request('GET', '/api/ac/memory', { key, query: { agent_key: key, memory_key: 'b' } });
    await server.request('DELETE', '/api/ac/memory', { key, query: { agent_key: key, memory_key: 'b' } }); // free
    const res = await usage(key);
    expect(res.status).toBe(200);
    expect(res.body.since).toBe('2026-10-25T00:00:00.000Z');
    expect(res.body.days).toHaveLength(30);
    expect(res.body.days[0]).toEqual({ date: '2026-10-25', spent_cents: 0, charges: 0 });
    expect(res.body.days.filter((d: { charges: number }) => d.charges > 0)).toEqual([
      { date: '2026-11-21', spent_cents: 1, charges: 1 },
      { date: '2026-11-23', spent_cents: 2, charges: 2 },
    ]);
    expect(res.body.days.at(-1).date).toBe('2026-11-23');
    expect(res.body.operations).toEqual([
      { operation: 'memory_store', charges: 2, spent_cents: 2 },
      { operation: 'memory_retrieve', charges: 1, spent_cents: 1 },
    ]);
    expect(res.body.today).toEqual({
      date: '2026-11-23',
      spent_cents: 2,
      daily_limit_cents: 40,
      resets_at: '2026-11-24T00:00:00.000Z',
    });
    expect(res.body).toMatchObject({ credit_balance_cents: 47, plan: 'pay-as-you-go' });
    expect(res.body.live_data).toEqual({
      answers: 0,
      fresh: 0,
      hit: 0,
      stale: 0,
      shared_flight: 0,
      cache_hit_rate: null,
    });
    // A shorter window leaves the older day out; usage itself is free.
    const week = await usage(key, { days: '2' });
    expect(week.body.days).toEqual([
      { date: '2026-11-22', spent_cents: 0, charges: 0 },
      { date: '2026-11-23', spent_cents: 2, charges: 2 },
    ]);
    expect(week.body.operations).toEqual([
      { operation: 'memory_retrieve', charges: 1, spent_cents: 1 },
      { operation: 'memory_store', charges: 1, spent_cents: 1 },
    ]);
    expect(week.body.credit_balance_cents).toBe(47);
  });

  it('counts live-data answers by how they were served, at once', async () => {
    const key = await server.register();
    const data = (query: string) =>
      server.request('POST', '/api/ac/data', { key, body: { agent_key: key, query_type: 'news', query } });
    expect((await data('usage-one')).body.cache_state).toBe('fresh');
    expect((await data('usage-one')).body.cache_state).toBe('hit');
    expect((await data('usage-one')).body.cache_state).toBe('hit');
    live.failWith('upstream_failed');
    try {
      expect((await data('usage-never')).status).toBe(502); // a failed request is not an answer
    } finally {
      live.next = undefined;
    }
    const res = await usage(key);
    expect(res.body.live_data).toEqual({
      answers: 3,
      fresh: 1,
      hit: 2,
      stale: 0,
      shared_flight: 0,
      cache_hit_rate: 2 / 3,
    });
    expect(res.body.operations).toEqual([{ operation: 'data', charges: 1, spent_cents: 2 }]);
  });

  it('refuses a bad days value, and a missing key', async () => {
    const key = await server.register();
    for (const days of ['0', '91', 'x']) {
      const res = await usage(key, { days });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_input', field: 'days' });
    }
    expect((await server.request('GET', '/api/ac/account/usage')).status).toBe(401);
  });

  it('pages the ledger newest first with next_cursor, and refuses a cursor it did not give', async () => {
    const key = await server.register();
    for (const k of ['p1', 'p2', 'p3', 'p4', 'p5']) await store(key, k);
    const all = await server.request('GET', '/api/ac/account/transactions', { key, query: { limit: '100' } });
    expect(all.body.transactions).toHaveLength(6);
    expect(all.body.next_cursor).toBeNull();
    const seen: unknown[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: Record<string, string> = { limit: '4' };
      if (cursor) query.cursor = cursor;
      const page = await server.request('GET', '/api/ac/account/transactions', { key, query });
      expect(page.status).toBe(200);
      seen.push(...page.body.transactions);
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(2);
    expect(seen).toEqual(all.body.transactions);
    expect((seen.at(-1) as { operation: string }).operation).toBe('starter_credit');
    for (const bad of ['nonsense', Buffer.from('{"b":0}').toString('base64url'), 'x'.repeat(201)]) {
      const res = await server.request('GET', '/api/ac/account/transactions', {
        key,
        query: { cursor: bad },
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_input', field: 'cursor' });
    }
  });
});

describe('account usage across a restart', () => {
  it('keeps the live-data counts: they are flushed when the server stops', async () => {
    const live = new FakeLiveSource();
    const first = await startTestServer({ live });
    const key = await first.register();
    await first.request('POST', '/api/ac/data', {
      key,
      body: { agent_key: key, query_type: 'news', query: 'restart' },
    });
    await first.request('POST', '/api/ac/data', {
      key,
      body: { agent_key: key, query_type: 'news', query: 'restart' },
    });
    await first.stop();
    const second = await startTestServer({ live, dataDir: first.dataDir });
    try {
      const res = await second.request('GET', '/api/ac/account/usage', { key });
      expect(res.body.live_data).toMatchObject({ answers: 2, fresh: 1, hit: 1 });
    } finally {
      await second.close();
    }
  });
});
