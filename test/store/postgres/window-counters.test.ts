/**
 * The shared window counters on real PostgreSQL (src/store/postgres/postgres-window-counters.ts): two
 * instances (stores opened as the service opens them, each with its own pool) on one database count one key
 * together; windows end by the database's clock, at exactly window_start + windowMs (as express-rate-limit's
 * MemoryStore), proved inside one transaction, where now() stands still, and once with a short real window;
 * decrement, reset, the sweep of ended windows, and 200 concurrent hits from two pools counted exactly.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/core/errors.js';
import { openPostgresStore } from '../../../src/store/postgres/open-postgres-store.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { PostgresSweeper } from '../../../src/store/postgres/postgres-sweeper.js';
import {
  DEFAULT_MAX_WINDOW_MS,
  PostgresWindowCounters,
} from '../../../src/store/postgres/postgres-window-counters.js';
import { type TestDatabase, testDatabase } from '../../helpers/postgres.js';

const MINUTE = 60_000;

let db: TestDatabase;
let admin: pg.Client;
const stores: PostgresStore[] = [];

beforeAll(async () => {
  db = await testDatabase({ label: 'window_counters' });
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await admin.query('DELETE FROM rate_limits');
});

/** An instance as the service opens it: its own store, pool and counters on the shared database. */
async function instance(poolMax = 10): Promise<PostgresWindowCounters> {
  const { store, counters } = await openPostgresStore({
    url: db.url,
    label: db.name,
    poolMax,
    statementTimeoutMs: 5000,
  });
  stores.push(store);
  return counters;
}

/** One round of the background sweep over the counters' tasks; the rows it removed. */
async function sweep(counters: PostgresWindowCounters): Promise<number> {
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  try {
    const outcome = await new PostgresSweeper(pool, {
      tasks: counters.sweepTasks,
      intervalMs: 60_000,
    }).runOnce();
    if (!outcome.ran) throw new Error('another sweep held the lock');
    return outcome.removed.rate_limits ?? Number.NaN;
  } finally {
    await pool.end();
  }
}

async function rows(): Promise<{ key: string; hits: number }[]> {
  return (await admin.query('SELECT key, hits FROM rate_limits ORDER BY key')).rows;
}

/** Moves a key's window back by `ms`, as if its first hit had come that much earlier. */
async function age(key: string, ms: number): Promise<void> {
  const { rowCount } = await admin.query(
    "UPDATE rate_limits SET window_start = window_start - $2::integer * interval '1 millisecond' WHERE key = $1",
    [key, ms],
  );
  expect(rowCount).toBe(1);
}

describe('shared window counters on PostgreSQL', () => {
  it('two instances count one key together; other keys apart; the window ends windowMs after the first hit', async () => {
    const [a, b] = [await instance(), await instance()];
    const before = Date.now();
    const first = await a.increment('k', MINUTE);
    const after = Date.now();
    expect(first.hits).toBe(1);
    // The database's clock and this process's are the same here: the window ends a minute after the hit.
    expect(first.resetAt.getTime()).toBeGreaterThanOrEqual(before + MINUTE - 5);
    expect(first.resetAt.getTime()).toBeLessThanOrEqual(after + MINUTE);

    expect(await b.increment('k', MINUTE)).toEqual({ hits: 2, resetAt: first.resetAt });
    expect(await a.increment('k', MINUTE)).toEqual({ hits: 3, resetAt: first.resetAt });
    expect((await b.increment('other', MINUTE)).hits).toBe(1);
    expect(await b.get('k', MINUTE)).toEqual({ hits: 3, resetAt: first.resetAt });
    expect(await a.get('never', MINUTE)).toBeUndefined();
    expect(await rows()).toEqual([
      { key: 'k', hits: 3 },
      { key: 'other', hits: 1 },
    ]);
  });

  it('a hit at window_start + windowMs starts the next window at 1; a millisecond earlier still counts (now() fixed in one transaction)', async () => {
    const a = await instance();
    await a.increment('edge', MINUTE);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      const inTx = new PostgresWindowCounters(client as unknown as pg.Pool);
      const setStart = (msAgo: number) =>
        client.query(
          "UPDATE rate_limits SET window_start = date_trunc('milliseconds', now()) - " +
            "$1::integer * interval '1 millisecond' WHERE key = 'edge'",
          [msAgo],
        );
      const { rows: nowRows } = await client.query("SELECT date_trunc('milliseconds', now()) AS now");
      const now = (nowRows[0].now as Date).getTime();

      await setStart(MINUTE - 1); // the window ends 1 ms from now
      expect(await inTx.get('edge', MINUTE)).toEqual({ hits: 1, resetAt: new Date(now + 1) });
      expect(await inTx.increment('edge', MINUTE)).toEqual({ hits: 2, resetAt: new Date(now + 1) });

      await setStart(MINUTE); // the window ends now: it is over
      expect(await inTx.get('edge', MINUTE)).toBeUndefined();
      expect(await inTx.increment('edge', MINUTE)).toEqual({ hits: 1, resetAt: new Date(now + MINUTE) });
      expect(await inTx.increment('edge', MINUTE)).toEqual({ hits: 2, resetAt: new Date(now + MINUTE) });
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
    expect(await rows()).toEqual([{ key: 'edge', hits: 2 }]);
  });

  it('a short window rolls over by the real clock, and an aged row restarts at 1 on another instance', async () => {
    const [a, b] = [await instance(), await instance()];
    const first = await a.increment('short', 250);
    expect(first.hits).toBe(1);
    await sleep(Math.max(0, first.resetAt.getTime() - Date.now()) + 30);
    expect(await b.get('short', 250)).toBeUndefined();
    const next = await b.increment('short', 250);
    expect(next.hits).toBe(1);
    expect(next.resetAt.getTime()).toBeGreaterThanOrEqual(first.resetAt.getTime() + 250);

    for (let i = 1; i <= 3; i++) expect((await a.increment('long', MINUTE)).hits).toBe(i);
    await age('long', MINUTE);
    const restarted = await b.increment('long', MINUTE);
    expect(restarted.hits).toBe(1);
    expect(restarted.resetAt.getTime()).toBeGreaterThan(Date.now() + MINUTE - 5_000);
    expect(await rows()).toEqual([
      { key: 'long', hits: 1 },
      { key: 'short', hits: 1 },
    ]);
  });

  it('decrement takes one hit back, never below 0; reset forgets the key on every instance', async () => {
    const [a, b] = [await instance(), await instance()];
    for (let i = 0; i < 3; i++) await a.increment('d', MINUTE);
    await b.decrement('d');
    expect((await a.get('d', MINUTE))?.hits).toBe(2);
    expect((await b.increment('d', MINUTE)).hits).toBe(3);
    for (let i = 0; i < 5; i++) await a.decrement('d');
    expect((await b.get('d', MINUTE))?.hits).toBe(0);
    expect((await a.increment('d', MINUTE)).hits).toBe(1);
    await a.decrement('nothing');
    expect(await rows()).toEqual([{ key: 'd', hits: 1 }]);

    const first = await a.increment('r', MINUTE);
    await a.increment('r', MINUTE);
    await age('r', 1_000);
    await b.reset('r');
    expect(await a.get('r', MINUTE)).toBeUndefined();
    const again = await a.increment('r', MINUTE);
    expect(again.hits).toBe(1);
    expect(again.resetAt.getTime()).toBeGreaterThan(first.resetAt.getTime());
    await b.reset('never-seen');
  });

  it('200 concurrent hits from two pools on one key get 1..200, each once', async () => {
    const [a, b] = [await instance(10), await instance(10)];
    const hits = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).increment('hot', MINUTE)),
    );
    expect(hits.map((h) => h.hits).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 200 }, (_, i) => i + 1),
    );
    expect(new Set(hits.map((h) => h.resetAt.getTime())).size).toBe(1);
    expect(await rows()).toEqual([{ key: 'hot', hits: 200 }]);
  });

  it('the sweep deletes the rows whose window started more than the longest window ago, in batches', async () => {
    const a = await instance();
    expect(a.maxWindowMs).toBe(DEFAULT_MAX_WINDOW_MS);
    await a.increment('fresh', MINUTE);
    await a.increment('hour-running', DEFAULT_MAX_WINDOW_MS);
    await age('hour-running', DEFAULT_MAX_WINDOW_MS - 60_000);
    await a.increment('hour-ended', DEFAULT_MAX_WINDOW_MS);
    await age('hour-ended', DEFAULT_MAX_WINDOW_MS + 1_000);
    // More ended rows than one batch deletes.
    await admin.query(
      "INSERT INTO rate_limits (key, window_start, hits) SELECT 'old:' || i, now() - interval '2 hours', 1 " +
        'FROM generate_series(1, 12000) AS i',
    );
    expect(await sweep(a)).toBe(12_001);
    expect((await rows()).map((r) => r.key)).toEqual(['fresh', 'hour-running']);
    expect(await sweep(a)).toBe(0);
    expect((await a.increment('hour-running', DEFAULT_MAX_WINDOW_MS)).hits).toBe(2);
  });

  it('refuses a window longer than it keeps, or not a whole positive number of ms', async () => {
    const a = await instance();
    await expect(a.increment('k', DEFAULT_MAX_WINDOW_MS + 1)).rejects.toThrow(RangeError);
    await expect(a.increment('k', 0)).rejects.toThrow(/from 1 to 3600000; got 0/);
    await expect(a.get('k', 1.5)).rejects.toThrow(RangeError);
    expect(await rows()).toEqual([]);
  });

  it('a database out of reach is the `unavailable` error', async () => {
    const store = new PostgresStore({ connectionString: 'postgresql://postgres@127.0.0.1:1/nowhere' });
    stores.push(store);
    const counters = new PostgresWindowCounters(store.queryable);
    const err = await counters.increment('k', MINUTE).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('unavailable');
  });
});
