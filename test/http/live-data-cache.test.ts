/** POST /api/ac/data: the shared cache, its ages, cache_minutes 0, and charging only for delivered fresh data. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { FakeLiveSource, sampleLiveData } from '../fakes/fake-live-source.js';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

describe('live data cache and charging', () => {
  let server: TestServer;
  const live = new FakeLiveSource();
  const clock = new ManualClock();
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    server = await startTestServer({ live, clock });
    alice = await server.register();
    bob = await server.register();
  });
  afterAll(() => server.close());

  const data = (key: string, body: Record<string, unknown>) =>
    server.request('POST', '/api/ac/data', { key, body: { agent_key: key, ...body } });

  it('a fresh fetch costs 2 and says where the data came from', async () => {
    const res = await data(alice, { query_type: 'weather', query: 'Berlin' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      query_type: 'weather',
      data: sampleLiveData('weather', 'berlin', 1),
      from_cache: false,
      cost_cents: 2,
      credit_balance_cents: 48,
      fetched_at: clock.now().toISOString(),
      source: 'fake',
      as_of: '2026-11-21T11:00:00.000Z',
      cache_age_s: 0,
      cache_state: 'fresh',
      cached_at: clock.now().toISOString(),
    });
    expect(live.calls).toEqual([{ type: 'weather', query: 'berlin' }]);
  });

  it('the same normalised query within cache_minutes is free, for any agent', async () => {
    clock.advance(5 * 60_000);
    const res = await data(bob, { query_type: 'weather', query: '  BERLIN ' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      from_cache: true,
      cost_cents: 0,
      credit_balance_cents: 50,
      cache_age_s: 300,
    });
    expect(res.body.data).toEqual(sampleLiveData('weather', 'berlin', 1));
    expect(live.calls).toHaveLength(1);
  });

  it('normalises with NFKC and collapses inner whitespace for the key', async () => {
    const res = await data(bob, { query_type: 'weather', query: 'Ｂｅｒｌｉｎ' });
    expect(res.body.from_cache).toBe(true);
    const spaced = await data(bob, { query_type: 'news', query: 'open   source\tAI' });
    const same = await data(bob, { query_type: 'news', query: 'Open Source AI' });
    expect(spaced.body.from_cache).toBe(false);
    expect(same.body.from_cache).toBe(true);
    expect(live.calls.at(-1)).toEqual({ type: 'news', query: 'open source ai' });
  });

  it('a type is part of the key', async () => {
    const res = await data(alice, { query_type: 'search', query: 'berlin' });
    expect(res.body.from_cache).toBe(false);
  });

  it('an entry older than cache_minutes is fetched fresh and charged; exactly cache_minutes old is still fresh', async () => {
    const calls = live.calls.length;
    // The Berlin weather entry is 5 minutes old now.
    const fiveOk = await data(alice, { query_type: 'weather', query: 'berlin', cache_minutes: 5 });
    expect(fiveOk.body.from_cache).toBe(true);
    const fourStale = await data(alice, { query_type: 'weather', query: 'berlin', cache_minutes: 4 });
    expect(fourStale.body).toMatchObject({ from_cache: false, cost_cents: 2 });
    expect(live.calls.length).toBe(calls + 1);
    clock.advance(16 * 60_000);
    const defaultStale = await data(bob, { query_type: 'weather', query: 'berlin' });
    expect(defaultStale.body.from_cache).toBe(false);
    const longOk = await data(bob, { query_type: 'weather', query: 'berlin', cache_minutes: 1440 });
    expect(longOk.body.from_cache).toBe(true);
  });

  it('cache_minutes 0 always fetches fresh and costs 2', async () => {
    const before = live.calls.length;
    const a = await data(alice, { query_type: 'price', query: 'btc', cache_minutes: 0 });
    const b = await data(alice, { query_type: 'price', query: 'btc', cache_minutes: 0 });
    expect([a.body.from_cache, b.body.from_cache]).toEqual([false, false]);
    expect([a.body.cost_cents, b.body.cost_cents]).toEqual([2, 2]);
    expect(b.body.credit_balance_cents).toBe(a.body.credit_balance_cents - 2);
    expect(live.calls.length).toBe(before + 2);
  });

  it('a failed fetch costs nothing and caches nothing', async () => {
    const before = (await server.request('GET', '/api/ac/account', { key: alice })).body.credit_balance_cents;
    live.failWith('upstream_failed');
    const res = await data(alice, { query_type: 'news', query: 'outage' });
    live.next = undefined;
    expect(res.status).toBe(502);
    expect((await server.request('GET', '/api/ac/account', { key: alice })).body.credit_balance_cents).toBe(
      before,
    );
    const retry = await data(alice, { query_type: 'news', query: 'outage' });
    expect(retry.body).toMatchObject({ from_cache: false, cost_cents: 2 });
  });

  it('parallel fresh fetches never outrun the balance, and unpaid results are not cached', async () => {
    const agent = await server.register();
    for (let i = 0; i < 24; i++)
      await data(agent, { query_type: 'news', query: `spend ${i}`, cache_minutes: 0 });
    // 2 cents left: ten parallel fetches of different queries may start one upstream call only.
    const before = live.calls.length;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => data(agent, { query_type: 'news', query: `race ${i}` })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 402)).toHaveLength(9);
    expect(live.calls.length).toBe(before + 1);
    const again = await Promise.all(
      Array.from({ length: 10 }, (_, i) => data(agent, { query_type: 'news', query: `race ${i}` })),
    );
    expect(again.filter((r) => r.status === 200 && r.body.from_cache)).toHaveLength(1);
  });

  it('single-flight: concurrent identical requests make one upstream call and one charge', async () => {
    const agents = await Promise.all([server.register(), server.register(), server.register()]);
    let open: (() => void) | undefined;
    live.next = (_type, query) =>
      new Promise((resolve) => {
        open = () => resolve({ data: { echo: query }, source: 'fake' });
      });
    const before = live.calls.length;
    const pending = [
      data(agents[0] as string, { query_type: 'search', query: 'flight' }),
      data(agents[1] as string, { query_type: 'search', query: 'Flight' }),
      data(agents[2] as string, { query_type: 'search', query: ' flight ', cache_minutes: 0 }),
      data(agents[0] as string, { query_type: 'search', query: 'FLIGHT' }),
    ];
    while (!open) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50)); // let every request reach the server
    open();
    const results = await Promise.all(pending);
    live.next = undefined;
    expect(live.calls.length).toBe(before + 1);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(results.filter((r) => r.body.cost_cents === 2)).toHaveLength(1);
    expect(results.filter((r) => r.body.from_cache === true && r.body.cost_cents === 0)).toHaveLength(3);
    const balances = await Promise.all(
      agents.map(
        async (k) => (await server.request('GET', '/api/ac/account', { key: k })).body.credit_balance_cents,
      ),
    );
    expect(balances.reduce((a, b) => a + b, 0)).toBe(150 - 2);
  });

  it('single-flight: a failed fetch fails every waiter, free', async () => {
    const agents = await Promise.all([server.register(), server.register()]);
    let fail: (() => void) | undefined;
    live.next = () =>
      new Promise((_resolve, reject) => {
        fail = () => reject(new AppError('upstream_failed', 'fake outage'));
      });
    const pending = agents.map((k) => data(k, { query_type: 'search', query: 'doomed' }));
    while (!fail) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    fail();
    const results = await Promise.all(pending);
    live.next = undefined;
    expect(results.map((r) => r.status)).toEqual([502, 502]);
    for (const k of agents) {
      expect((await server.request('GET', '/api/ac/account', { key: k })).body.credit_balance_cents).toBe(50);
    }
  });

  it('stale-if-error: with every upstream down, an older cached result is served free, marked stale', async () => {
    const agent = await server.register();
    await data(agent, { query_type: 'weather', query: 'Oslo' });
    clock.advance(20 * 60_000);
    live.failWith('upstream_timeout');
    const res = await data(agent, { query_type: 'weather', query: 'oslo' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      from_cache: true,
      stale: true,
      cost_cents: 0,
      cache_age_s: 1200,
      credit_balance_cents: 48,
    });
    live.failWith('not_found');
    expect((await data(agent, { query_type: 'weather', query: 'oslo' })).status).toBe(404);
    live.failWith('upstream_failed');
    expect((await data(agent, { query_type: 'weather', query: 'nowhere cached' })).status).toBe(502);
    live.next = undefined;
  });

  it('a result that cannot be fresher (daily rates) is served from cache within its floor, saying so', async () => {
    const agent = await server.register();
    live.next = async () => ({ data: { price: 1.08 }, source: 'frankfurter', refreshFloorS: 3600 });
    await data(agent, { query_type: 'price', query: 'eur' });
    live.next = undefined;
    clock.advance(30 * 60_000);
    const capped = await data(agent, { query_type: 'price', query: 'eur', cache_minutes: 0 });
    expect(capped.body).toMatchObject({ from_cache: true, cost_cents: 0, cache_age_s: 1800 });
    expect(capped.body.freshness_note).toMatch(/frankfurter publishes new data at most every 60 minutes/);
    clock.advance(31 * 60_000);
    const fresh = await data(agent, { query_type: 'price', query: 'eur', cache_minutes: 0 });
    expect(fresh.body).toMatchObject({ from_cache: false, cost_cents: 2 });
  });

  it('records each fresh fetch in the ledger with its query', async () => {
    const res = await server.request('GET', '/api/ac/account/transactions', { key: bob });
    const dataEntries = res.body.transactions.filter((t: { operation: string }) => t.operation === 'data');
    expect(dataEntries[0]).toMatchObject({ amount_cents: -2, query_type: 'weather', query: 'berlin' });
  });

  it('cached data stays free at a zero balance', async () => {
    const poor = await server.register();
    for (let i = 0; i < 25; i++) await data(poor, { query_type: 'news', query: `n${i}`, cache_minutes: 0 });
    expect((await server.request('GET', '/api/ac/account', { key: poor })).body.credit_balance_cents).toBe(0);
    const cached = await data(poor, { query_type: 'news', query: 'n3' });
    expect(cached.body).toMatchObject({ from_cache: true, cost_cents: 0, credit_balance_cents: 0 });
    const fresh = await data(poor, { query_type: 'news', query: 'never seen' });
    expect(fresh.status).toBe(402);
  });
});
