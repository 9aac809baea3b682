/**
 * POST /api/ac/data on several instances sharing one PostgreSQL database (issue 13): a fresh fetch by one
 * instance is a free cache hit on every other, a burst of identical requests spread over instances makes
 * one upstream call and one charge, a failed leader leaves nobody hanging and charges nobody, and a lease
 * whose holder died blocks its key no longer than the lease.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { LiveResult } from '../../src/core/live-port.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { testDatabase } from '../helpers/postgres.js';
import { type ApiResponse, ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

const live = new FakeLiveSource();
const clock = new ManualClock();
let url: string;
let admin: pg.Client;
let instances: TestServer[] = [];
let a: TestServer;
let b: TestServer;
let c: TestServer;

beforeAll(async () => {
  url = (await testDatabase({ label: 'live_shared' })).url;
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  // Three instances on one database, one upstream (counted once for all) and one clock.
  const start = () => startTestServer({ live, clock, env: { DATABASE_URL: url, DATA_DIR: '' } });
  instances = [await start(), await start(), await start()];
  [a, b, c] = instances as [TestServer, TestServer, TestServer];
});
afterAll(async () => {
  for (const server of instances) await server.close();
  await admin?.end();
});
afterEach(() => {
  live.next = undefined;
});

const data = (server: TestServer, key: string, body: Record<string, unknown>) =>
  server.request('POST', '/api/ac/data', { key, body: { agent_key: key, ...body } });

const balance = async (key: string) =>
  (await a.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;

/** Fresh debits of `query` in the shared ledger. */
async function debits(query: string): Promise<number> {
  const { rows } = await admin.query(
    "SELECT count(*)::int AS n FROM ledger WHERE operation = 'data' AND query = $1 AND amount_cents < 0",
    [query],
  );
  return rows[0].n;
}

/** Waits until some instance holds the lease of `key` (its fetch is under way). */
async function flightStarted(key: string): Promise<void> {
  while ((await admin.query('SELECT 1 FROM live_flights WHERE key = $1', [key])).rowCount === 0)
    await sleep(5);
}

/** An upstream whose first call answers (or fails) only when the test opens it; later calls at once. */
function gatedUpstream(outcome: (query: string) => LiveResult | AppError) {
  let open: (() => void) | undefined;
  const settle = (query: string, resolve: (r: LiveResult) => void, reject: (e: AppError) => void) => {
    const result = outcome(query);
    if (result instanceof AppError) reject(result);
    else resolve(result);
  };
  live.next = (_type, query) =>
    new Promise((resolve, reject) => {
      if (open) settle(query, resolve, reject);
      else open = () => settle(query, resolve, reject);
    });
  return {
    /** Waits for the first upstream call, lets `holdMs` pass with it under way, then answers it. */
    async release(holdMs: number) {
      while (!open) await sleep(5);
      await sleep(holdMs);
      open();
    },
  };
}

/** Starts `count` requests spread round-robin over the instances and agents; says which have settled. */
function burst(count: number, agents: string[], body: Record<string, unknown>) {
  const settled = new Set<number>();
  const all = Promise.all(
    Array.from({ length: count }, (_, i) =>
      data(instances[i % instances.length] as TestServer, agents[i % agents.length] as string, body).then(
        (res) => {
          settled.add(i);
          return res;
        },
      ),
    ),
  );
  return { all, settled };
}

describe('live data shared by instances on PostgreSQL', () => {
  it('a fresh fetch on one instance is a free hit on another, and stays in its own level', async () => {
    const [alice, bob] = [await a.register(), await a.register()];
    const calls = live.calls.length;
    const fresh = await data(a, alice, { query_type: 'weather', query: 'Lisbon' });
    expect(fresh.body).toMatchObject({ from_cache: false, cost_cents: 2, credit_balance_cents: 48 });
    const { rows } = await admin.query('SELECT value, fetched_at FROM live_cache WHERE key = $1', [
      'weather:lisbon',
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].value).toMatchObject({ data: fresh.body.data, fetchedAt: fresh.body.fetched_at });

    clock.advance(60_000);
    const hit = await data(b, bob, { query_type: 'weather', query: ' LISBON ' });
    expect(hit.status).toBe(200);
    expect(hit.body).toMatchObject({
      from_cache: true,
      cost_cents: 0,
      credit_balance_cents: 50,
      cache_age_s: 60,
      data: fresh.body.data,
      fetched_at: fresh.body.fetched_at,
    });
    expect(live.calls.length).toBe(calls + 1);
    expect(await debits('lisbon')).toBe(1);

    // B keeps what it read in its own level: with the shared row gone, B still serves it free...
    await admin.query('DELETE FROM live_cache WHERE key = $1', ['weather:lisbon']);
    expect((await data(b, bob, { query_type: 'weather', query: 'lisbon' })).body).toMatchObject({
      from_cache: true,
      cost_cents: 0,
    });
    expect(live.calls.length).toBe(calls + 1);
    // ...while C, which never saw it, has to fetch.
    expect((await data(c, bob, { query_type: 'weather', query: 'lisbon' })).body).toMatchObject({
      from_cache: false,
      cost_cents: 2,
    });
    expect(live.calls.length).toBe(calls + 2);
  });

  it('an entry in one instance too old for a request gives way to a newer one another instance stored', async () => {
    const agent = await a.register();
    const first = await data(a, agent, { query_type: 'news', query: 'levels' });
    expect((await data(b, agent, { query_type: 'news', query: 'levels' })).body.from_cache).toBe(true);
    clock.advance(10 * 60_000);
    const refreshed = await data(c, agent, { query_type: 'news', query: 'levels', cache_minutes: 5 });
    expect(refreshed.body).toMatchObject({ from_cache: false, cost_cents: 2 });
    expect(refreshed.body.fetched_at).not.toBe(first.body.fetched_at);
    // B's own entry is 10 minutes old: for cache_minutes 5 it takes C's from the database, free.
    const calls = live.calls.length;
    const fromShared = await data(b, agent, { query_type: 'news', query: 'levels', cache_minutes: 5 });
    expect(fromShared.body).toMatchObject({
      from_cache: true,
      cost_cents: 0,
      fetched_at: refreshed.body.fetched_at,
      data: refreshed.body.data,
    });
    // For cache_minutes 15 its own older entry is good enough.
    const own = await data(b, agent, { query_type: 'news', query: 'levels', cache_minutes: 15 });
    expect(own.body).toMatchObject({ from_cache: true, cost_cents: 0 });
    expect(live.calls.length).toBe(calls);
  });

  it('a burst of 20 identical requests over three instances makes one upstream call and one charge', async () => {
    const agents = await Promise.all(Array.from({ length: 5 }, () => a.register()));
    const upstream = gatedUpstream((query) => ({ data: { echo: query }, source: 'fake' }));
    const calls = live.calls.length;
    const { all, settled } = burst(20, agents, { query_type: 'search', query: 'Thundering Herd' });
    // The upstream is slow: every request arrives while the one fetch is under way.
    await upstream.release(300);
    expect(settled.size).toBe(0);
    const results = await all;

    expect(live.calls.length).toBe(calls + 1);
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const fresh = results.filter((r) => r.body.from_cache === false);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]?.body.cost_cents).toBe(2);
    const cached = results.filter((r) => r.body.from_cache === true && r.body.cost_cents === 0);
    expect(cached).toHaveLength(19);
    for (const r of results) expect(r.body.data).toEqual({ echo: 'thundering herd' });
    expect(await debits('thundering herd')).toBe(1);
    const balances = await Promise.all(agents.map(balance));
    expect(balances.reduce((sum, x) => sum + x, 0)).toBe(5 * 50 - 2);
    expect((await admin.query('SELECT count(*)::int AS n FROM live_flights')).rows[0].n).toBe(0);
  });

  it('a failed leader leaves no follower hanging, and charges nobody', async () => {
    const agents = await Promise.all(Array.from({ length: 3 }, () => a.register()));
    // The first call fails after a while; any later one at once.
    const upstream = gatedUpstream(() => new AppError('upstream_failed', 'fake outage'));
    const calls = live.calls.length;
    const started = Date.now();
    const { all, settled } = burst(9, agents, { query_type: 'search', query: 'doomed herd' });
    await upstream.release(300);
    const results = await all;
    // Less than the 6 s lease: the followers learnt that the flight ended, not waiting out its lease.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(settled.size).toBe(9);
    expect(results.map((r) => r.status)).toEqual(Array(9).fill(502));
    // Each instance tried at most once, one after the other, not once per request.
    expect(live.calls.length - calls).toBeGreaterThanOrEqual(1);
    expect(live.calls.length - calls).toBeLessThanOrEqual(3);
    expect(await Promise.all(agents.map(balance))).toEqual([50, 50, 50]);
    expect(await debits('doomed herd')).toBe(0);
    expect((await admin.query('SELECT count(*)::int AS n FROM live_flights')).rows[0].n).toBe(0);
  });

  it('a failed leader with an older result cached: every instance serves it stale, free', async () => {
    const agents = await Promise.all(Array.from({ length: 3 }, () => a.register()));
    const old = await data(a, agents[0] as string, { query_type: 'weather', query: 'Bergen' });
    expect(old.body.cost_cents).toBe(2);
    clock.advance(30 * 60_000);
    const upstream = gatedUpstream(() => new AppError('upstream_timeout', 'fake timeout'));
    const { all } = burst(9, agents, { query_type: 'weather', query: 'bergen' });
    await upstream.release(300);
    const results: ApiResponse[] = await all;
    expect(results.map((r) => r.status)).toEqual(Array(9).fill(200));
    for (const r of results) {
      expect(r.body).toMatchObject({
        from_cache: true,
        stale: true,
        cost_cents: 0,
        cache_age_s: 1800,
        fetched_at: old.body.fetched_at,
      });
    }
    expect(await Promise.all(agents.map(balance))).toEqual([48, 50, 50]);
  });

  it('a lease whose holder died blocks its key only until the lease runs out', async () => {
    const agent = await a.register();
    await admin.query(
      "INSERT INTO live_flights (key, owner, lease_until) VALUES ($1, 'dead-instance', now() + interval '1500 milliseconds')",
      ['price:dead lease'],
    );
    const calls = live.calls.length;
    const started = Date.now();
    const res = await data(b, agent, { query_type: 'price', query: 'Dead Lease' });
    const waited = Date.now() - started;
    expect(res.body).toMatchObject({ from_cache: false, cost_cents: 2, credit_balance_cents: 48 });
    expect(live.calls.length).toBe(calls + 1);
    // It waited for the lease (not ignoring it), and took the key over once it ran out.
    expect(waited).toBeGreaterThanOrEqual(1_000);
    expect(waited).toBeLessThan(5_000);
    expect(
      (await admin.query('SELECT * FROM live_flights WHERE key = $1', ['price:dead lease'])).rows,
    ).toEqual([]);
  });

  it('cache_minutes -1 on another instance: any age from the shared cache, a flight under way, or 404 free', async () => {
    const [payer, reader] = [await a.register(), await a.register()];
    const fresh = await data(a, payer, { query_type: 'weather', query: 'Reykjavik' });
    expect(fresh.body).toMatchObject({ from_cache: false, cost_cents: 2 });
    const calls = live.calls.length;

    // Three days later, an instance that never saw it serves the shared row, whatever its age, free.
    clock.advance(3 * 24 * 3_600_000);
    const old = await data(b, reader, { query_type: 'weather', query: 'reykjavik', cache_minutes: -1 });
    expect(old.status).toBe(200);
    expect(old.body).toMatchObject({
      from_cache: true,
      cost_cents: 0,
      cache_state: 'hit',
      cached_at: fresh.body.fetched_at,
      data: fresh.body.data,
      credit_balance_cents: 50,
    });
    expect(live.calls.length).toBe(calls);

    // A query under way on A: C, asking cached-only, joins the flight instead of refusing.
    const upstream = gatedUpstream((query) => ({ data: { echo: query }, source: 'fake' }));
    const leader = data(a, payer, { query_type: 'news', query: 'cached only flight' });
    await flightStarted('news:cached only flight');
    const follower = data(c, reader, { query_type: 'news', query: 'cached only flight', cache_minutes: -1 });
    await upstream.release(200);
    expect((await leader).body).toMatchObject({ from_cache: false, cost_cents: 2 });
    expect((await follower).body).toMatchObject({
      from_cache: true,
      cost_cents: 0,
      credit_balance_cents: 50,
    });
    expect(await debits('cached only flight')).toBe(1);

    // Nothing cached anywhere and nothing in flight: 404 not_cached on every instance, no upstream call, free.
    const before = live.calls.length;
    for (const server of instances) {
      const missing = await data(server, reader, {
        query_type: 'price',
        query: 'nowhere coin',
        cache_minutes: -1,
      });
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('not_cached');
    }
    expect(live.calls.length).toBe(before);
    expect(await balance(reader)).toBe(50);
  });

  it('max_cost_cents below the fresh price follows a flight under way on another instance', async () => {
    const [payer, frugal] = [await a.register(), await a.register()];
    const upstream = gatedUpstream((query) => ({ data: { echo: query }, source: 'fake' }));
    const leader = data(a, payer, { query_type: 'news', query: 'in flight' });
    await flightStarted('news:in flight');
    const follower = data(b, frugal, { query_type: 'news', query: 'in flight', max_cost_cents: 0 });
    await upstream.release(200);
    expect((await leader).body).toMatchObject({ from_cache: false, cost_cents: 2 });
    expect((await follower).body).toMatchObject({
      from_cache: true,
      cost_cents: 0,
      credit_balance_cents: 50,
    });
    // With nothing cached and nothing in flight, it is still "nothing": 402, free.
    const refused = await data(c, frugal, { query_type: 'news', query: 'not in flight', max_cost_cents: 0 });
    expect(refused.status).toBe(402);
    expect(refused.body.code).toBe('max_cost_exceeded');
  });
});
