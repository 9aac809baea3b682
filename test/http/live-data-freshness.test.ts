/**
 * POST /api/ac/data, freshness in both directions: `cache_minutes: -1` (cached only: any age, free, or 404
 * not_cached without an upstream call) and the `cache_state` and `cached_at` of every answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { LiveResult } from '../../src/core/live-port.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

describe('live data freshness: cached only, cache_state and cached_at', () => {
  let server: TestServer;
  const live = new FakeLiveSource();
  const clock = new ManualClock();

  beforeAll(async () => {
    server = await startTestServer({ live, clock });
  });
  afterAll(() => server.close());

  const data = (key: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
    server.request('POST', '/api/ac/data', { key, body: { agent_key: key, ...body }, headers });
  const balance = async (key: string) =>
    (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;

  /** Holds the next upstream call until `open` (with a result) or `fail` is called. */
  function holdUpstream() {
    const held: { open?: (result: LiveResult) => void; fail?: () => void } = {};
    live.next = () =>
      new Promise((resolve, reject) => {
        held.open = resolve;
        held.fail = () => reject(new AppError('upstream_failed', 'fake outage'));
      });
    return held;
  }
  const until = async (ready: () => boolean) => {
    while (!ready()) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50)); // let every request reach the server
  };

  it('-1 with nothing cached: 404 not_cached, no upstream call, nothing charged', async () => {
    const agent = await server.register();
    const calls = live.calls.length;
    const res = await data(agent, { query_type: 'weather', query: 'Nowhere', cache_minutes: -1 });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      error:
        'Nothing is cached for this query_type and query, and cache_minutes -1 only serves the cache; ' +
        'nothing was charged. Use cache_minutes 0 or more to fetch it.',
      code: 'not_cached',
    });
    expect(live.calls.length).toBe(calls);
    expect(await balance(agent)).toBe(50);
  });

  it('-1 serves an entry older than the cache_minutes asked elsewhere, free, as a hit', async () => {
    const agent = await server.register();
    const first = await data(agent, { query_type: 'news', query: 'Old News' });
    expect(first.body).toMatchObject({ from_cache: false, cost_cents: 2, cache_state: 'fresh' });
    expect(first.body.cached_at).toBe(first.body.fetched_at);
    clock.advance(1000 * 60_000);
    const calls = live.calls.length;
    const res = await data(agent, { query_type: 'news', query: 'old   news', cache_minutes: -1 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      from_cache: true,
      cost_cents: 0,
      credit_balance_cents: 48,
      cache_age_s: 60_000,
      cache_state: 'hit',
      cached_at: first.body.fetched_at,
      fetched_at: first.body.fetched_at,
      data: first.body.data,
    });
    expect(res.body.stale).toBeUndefined();
    expect(live.calls.length).toBe(calls);
    // The same entry is too old for a request that asks for 999 minutes: that one fetches.
    const refetched = await data(agent, { query_type: 'news', query: 'old news', cache_minutes: 999 });
    expect(refetched.body).toMatchObject({ from_cache: false, cache_state: 'fresh' });
  });

  it('every cache_state: fresh, hit, stale (upstream down, entry cached) and shared_flight', async () => {
    const agent = await server.register();
    const fresh = await data(agent, { query_type: 'weather', query: 'Lima' });
    expect(fresh.body).toMatchObject({ cache_state: 'fresh', from_cache: false });
    clock.advance(60_000);
    const hit = await data(agent, { query_type: 'weather', query: 'lima' });
    expect(hit.body).toMatchObject({
      cache_state: 'hit',
      from_cache: true,
      cached_at: fresh.body.fetched_at,
    });
    live.failWith('upstream_failed');
    const stale = await data(agent, { query_type: 'weather', query: 'lima', cache_minutes: 0 });
    live.next = undefined;
    expect(stale.body).toMatchObject({
      cache_state: 'stale',
      stale: true,
      from_cache: true,
      cost_cents: 0,
      cached_at: fresh.body.fetched_at,
    });

    const other = await server.register();
    const held = holdUpstream();
    const calls = live.calls.length;
    const leader = data(agent, { query_type: 'search', query: 'shared' });
    await until(() => held.open !== undefined); // the leader's fetch is under way
    const followers = [
      data(other, { query_type: 'search', query: 'Shared' }),
      data(other, { query_type: 'search', query: 'SHARED', cache_minutes: -1 }),
    ];
    await new Promise((r) => setTimeout(r, 50));
    held.open?.({ data: { echo: 'shared' }, source: 'fake' });
    const results = await Promise.all([leader, ...followers]);
    live.next = undefined;
    expect(live.calls.length).toBe(calls + 1);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.body.cache_state)).toEqual(['fresh', 'shared_flight', 'shared_flight']);
    expect(results.map((r) => r.body.cost_cents)).toEqual([2, 0, 0]);
    expect(new Set(results.map((r) => r.body.cached_at)).size).toBe(1);
  });

  it('-1 joining a flight that fails: 404 not_cached, not the upstream error, free', async () => {
    const agent = await server.register();
    const held = holdUpstream();
    const leader = data(agent, { query_type: 'search', query: 'doomed flight' });
    await until(() => held.fail !== undefined);
    const joiner = data(agent, { query_type: 'search', query: 'doomed flight', cache_minutes: -1 });
    await new Promise((r) => setTimeout(r, 50));
    held.fail?.();
    const [led, joined] = await Promise.all([leader, joiner]);
    live.next = undefined;
    expect(led.status).toBe(502);
    expect(joined.status).toBe(404);
    expect(joined.body.code).toBe('not_cached');
    expect(await balance(agent)).toBe(50);
  });

  it('-1 with an Idempotency-Key behaves like other free answers: recorded once served, not when refused', async () => {
    const agent = await server.register();
    const headers = { 'Idempotency-Key': 'fresh-1' };
    const body = { query_type: 'price', query: 'idem coin', cache_minutes: -1 };
    const refused = await data(agent, body, headers);
    expect(refused.status).toBe(404);
    await data(agent, { query_type: 'price', query: 'idem coin' });
    const served = await data(agent, body, headers);
    expect(served.status).toBe(200);
    expect(served.headers.get('idempotent-replayed')).toBeNull();
    expect(served.body).toMatchObject({ cache_state: 'hit', cost_cents: 0 });
    clock.advance(60_000);
    const replayed = await data(agent, body, headers);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.text).toBe(served.text);
    expect(await balance(agent)).toBe(48);
  });

  it('no other negative cache_minutes: 400 naming -1 as the one', async () => {
    const agent = await server.register();
    const res = await data(agent, { query_type: 'news', query: 'x', cache_minutes: -2 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_input', field: 'cache_minutes' });
    expect(res.body.error).toMatch(/cache_minutes must be -1 \(cached only\) or from 0 to 1440/);
  });

  it('the OpenAPI document publishes -1 and the two new fields', async () => {
    const doc = (await server.request('GET', '/api/ac/openapi.json')).body;
    const text = JSON.stringify(doc);
    expect(text).toContain('"minimum":-1');
    expect(text).toContain('"shared_flight"');
    expect(text).toContain('cached_at');
    expect(text).toContain('not_cached');
  });
});
