/**
 * The shared live-data cache on real PostgreSQL (src/store/postgres/postgres-live-cache.ts), as two
 * instances use it (each with its own pool and first level): entries by primary key behind each process's
 * own, upserts that never go back in time, leases that one instance at a time holds (taken over once run
 * out), followers that get the leader's row or learn that the flight ended, the sweep of old rows, and a
 * database out of reach.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/core/errors.js';
import type { CachedLiveResult } from '../../../src/core/live-port.js';
import {
  PostgresLiveCache,
  type PostgresLiveCacheOptions,
} from '../../../src/store/postgres/postgres-live-cache.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { PostgresSweeper } from '../../../src/store/postgres/postgres-sweeper.js';
import { type TestDatabase, testDatabase } from '../../helpers/postgres.js';

let db: TestDatabase;
let admin: pg.Client;
const pools: pg.Pool[] = [];
const caches: PostgresLiveCache[] = [];

beforeAll(async () => {
  db = await testDatabase({ label: 'live_cache' });
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
});
afterEach(async () => {
  for (const cache of caches.splice(0)) cache.close();
  for (const pool of pools.splice(0)) await pool.end();
  await admin.query('TRUNCATE live_cache, live_flights');
});

function pool(): pg.Pool {
  const made = new pg.Pool({ connectionString: db.url, max: 3 });
  pools.push(made);
  return made;
}

/** An instance's cache: its own pool and first level, on the shared database. */
function instance(options: Partial<PostgresLiveCacheOptions> = {}) {
  const cache = new PostgresLiveCache(pool(), { maxAgeMinutes: 1440, ...options });
  caches.push(cache);
  return cache;
}

const result = (fetchedAt: string, data: Record<string, unknown> = { n: 1 }): CachedLiveResult => ({
  data,
  source: 'fake',
  fetchedAt,
});

const T0 = '2026-11-21T12:00:00.000Z';
const T1 = '2026-11-21T12:05:00.000Z';

describe('the shared live cache on PostgreSQL', () => {
  it('a result one instance stores is found by another, kept in its own level, never replaced by an older one', async () => {
    const [a, b] = [instance(), instance()];
    const value = { ...result(T0, { text: 'a\u0000b ✓ \u2028', nested: [1, { x: null }] }), asOf: T0 };
    await a.set('weather:oslo', value);
    expect(a.peek('weather:oslo')).toEqual(value);
    expect(b.peek('weather:oslo')).toBeUndefined();
    expect(await b.get('weather:oslo')).toEqual(value);
    expect(b.peek('weather:oslo')).toEqual(value);
    expect(Object.isFrozen(b.peek('weather:oslo'))).toBe(true);

    // An older result (a slow instance finishing late) does not replace the newer row.
    await b.set('weather:oslo', result('2026-11-21T11:00:00.000Z'));
    const { rows } = await admin.query('SELECT value, fetched_at FROM live_cache');
    expect(rows).toEqual([{ value, fetched_at: new Date(T0) }]);
    // A newer one does, and `get` prefers it to the older entry in its own level.
    await a.set('weather:oslo', result(T1, { n: 2 }));
    expect(b.peek('weather:oslo')?.fetchedAt).toBe('2026-11-21T11:00:00.000Z');
    expect((await b.get('weather:oslo'))?.data).toEqual({ n: 2 });
    // One fetched at the same instant and stored later replaces it: the last answer wins a tie.
    await a.set('weather:oslo', result(T1, { n: 3 }));
    expect((await admin.query('SELECT value FROM live_cache')).rows[0].value.data).toEqual({ n: 3 });
    expect(await b.get('weather:nowhere')).toBeUndefined();
  });

  it('one instance at a time holds a lease; its own leftover is its again; a lease that ran out is taken over', async () => {
    const [a, b] = [instance({ leaseMs: 60_000 }), instance({ leaseMs: 60_000 })];
    expect(await a.lead('k')).toBe('leader');
    expect(await b.lead('k')).toBe('follower');
    expect(await a.lead('k')).toBe('leader'); // left over: the core runs one flight per key per process
    await b.endFlight('k'); // not b's: nothing happens
    expect(await b.lead('k')).toBe('follower');
    await a.endFlight('k');
    expect(await b.lead('k')).toBe('leader');
    expect((await admin.query('SELECT owner FROM live_flights')).rows).toEqual([{ owner: b.owner }]);

    await admin.query("UPDATE live_flights SET lease_until = now() - interval '1 millisecond'");
    expect(await a.lead('k')).toBe('leader');
    const { rows } = await admin.query(
      "SELECT owner, lease_until - now() > interval '59 seconds' AS long FROM live_flights",
    );
    expect(rows).toEqual([{ owner: a.owner, long: true }]);
  });

  it("a follower gets the leader's newer row, or learns at once that the flight ended without one", async () => {
    const [a, b] = [instance({ pollMs: 20 }), instance({ pollMs: 20 })];
    await a.set('k', result(T0));
    expect(await a.lead('k')).toBe('leader');
    expect(await b.lead('k')).toBe('follower');
    const waiting = b.waitFor('k', T0);
    setTimeout(() => {
      void a.set('k', result(T1, { n: 2 })).then(() => a.endFlight('k'));
    }, 150);
    expect(await waiting).toEqual(result(T1, { n: 2 }));
    expect(b.peek('k')?.fetchedAt).toBe(T1);

    // The leader failed: no new row, lease ended.
    expect(await a.lead('k')).toBe('leader');
    const started = Date.now();
    const abandoned = b.waitFor('k', T1);
    setTimeout(() => void a.endFlight('k'), 150);
    expect(await abandoned).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2_000);
    // No flight at all: nothing to wait for.
    expect(await b.waitFor('k', T1)).toBeUndefined();
    expect(await b.waitFor('other', undefined)).toBeUndefined();
  });

  it('a leader renews its lease while it works; a leader gone lets it run out; a follower waits maxWaitMs at most', async () => {
    const [a, b] = [instance({ leaseMs: 300 }), instance({ leaseMs: 300, maxWaitMs: 400, pollMs: 20 })];
    expect(await a.lead('k')).toBe('leader');
    // Well past the 300 ms lease, a's renewals keep it.
    const started = Date.now();
    expect(await b.waitFor('k', undefined)).toBeUndefined();
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(380);
    expect(waited).toBeLessThan(2_000);
    expect(await b.lead('k')).toBe('follower');
    // An instance that stops (or dies) renews no more: its lease runs out, and b takes the key over.
    a.close();
    const stopped = Date.now();
    expect(await b.waitFor('k', undefined)).toBeUndefined();
    expect(Date.now() - stopped).toBeLessThan(380);
    expect(await b.lead('k')).toBe('leader');
    await b.endFlight('k');
    expect((await admin.query('SELECT * FROM live_flights')).rows).toEqual([]);
  });

  it('the sweep deletes cache rows older than the longest cache_minutes and leases that ran out, nothing else', async () => {
    const cache = instance({ maxAgeMinutes: 60 });
    await admin.query(
      'INSERT INTO live_cache (key, value, fetched_at) VALUES ' +
        "('old', '{}', now() - interval '61 minutes'), ('young', '{}', now() - interval '59 minutes'), " +
        "('new', '{}', now())",
    );
    await admin.query(
      'INSERT INTO live_flights (key, owner, lease_until) VALUES ' +
        "('expired', 'x', now() - interval '1 second'), ('live', 'y', now() + interval '1 minute')",
    );
    const sweep = async (now?: Date) => {
      const sweeper = new PostgresSweeper(pool(), {
        tasks: cache.sweepTasks,
        intervalMs: 60_000,
        ...(now ? { now: () => now } : {}),
      });
      const outcome = await sweeper.runOnce();
      return outcome.ran
        ? (outcome.removed.live_cache ?? 0) + (outcome.removed.live_flights ?? 0)
        : Number.NaN;
    };
    expect(await sweep()).toBe(2);
    const keys = async (table: string) =>
      (await admin.query(`SELECT key FROM ${table} ORDER BY key`)).rows.map((r) => r.key);
    expect(await keys('live_cache')).toEqual(['new', 'young']);
    expect(await keys('live_flights')).toEqual(['live']);
    expect(await sweep()).toBe(0);
    // Ages are the service's clock's, which wrote fetched_at: two minutes on, the 59-minute-old row goes too.
    expect(await sweep(new Date(Date.now() + 2 * 60_000))).toBe(1);
    expect(await keys('live_cache')).toEqual(['new']);

    // The same as the background sweeper's tasks.
    await admin.query(
      "INSERT INTO live_cache (key, value, fetched_at) VALUES ('old', '{}', now() - interval '2 hours')",
    );
    await admin.query("UPDATE live_flights SET lease_until = now() - interval '1 second'");
    // By a service clock three hours behind, that row is young; a lease is judged by the database's clock.
    const behind = new PostgresSweeper(pool(), {
      tasks: cache.sweepTasks,
      intervalMs: 60_000,
      now: () => new Date(Date.now() - 3 * 60 * 60_000),
    });
    expect(await behind.runOnce()).toEqual({ ran: true, removed: { live_cache: 0, live_flights: 1 } });
    const sweeper = new PostgresSweeper(pool(), { tasks: cache.sweepTasks, intervalMs: 60_000 });
    expect(await sweeper.runOnce()).toEqual({ ran: true, removed: { live_cache: 1, live_flights: 0 } });
    expect(await keys('live_cache')).toEqual(['new']);
    expect(await keys('live_flights')).toEqual([]);
  });

  it('a database out of reach: reads and leases fail `unavailable`; storing and ending do not throw', async () => {
    const store = new PostgresStore({ connectionString: 'postgresql://postgres@127.0.0.1:1/nowhere' });
    try {
      const cache = new PostgresLiveCache(store.queryable, { maxAgeMinutes: 15 });
      caches.push(cache);
      for (const call of [() => cache.get('k'), () => cache.lead('k'), () => cache.waitFor('k', undefined)]) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(AppError);
        expect((err as AppError).code).toBe('unavailable');
      }
      await cache.set('k', result(T0));
      expect(cache.peek('k')).toEqual(result(T0)); // served by this instance, only not shared
      await cache.endFlight('k');
    } finally {
      await store.close();
    }
  });
});
