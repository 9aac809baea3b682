/**
 * The background sweep on a shared database: it removes only what has expired (idempotency records past
 * their retention, claims whose lease ran out), in batches, and runs on one instance at a time.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IDEMPOTENCY_RETENTION_MS } from '../../../src/core/model.js';
import type { SweepOutcome } from '../../../src/store/background-rounds.js';
import {
  historySweep,
  IDEMPOTENCY_SWEEP,
  MEMORY_EXPIRY_SWEEP,
  PostgresSweeper,
  SWEEP_BATCH,
  SWEEP_LOCK_KEY,
  USAGE_SWEEP,
} from '../../../src/store/postgres/postgres-sweeper.js';
import { testDatabase } from '../../helpers/postgres.js';

let pools: pg.Pool[] = [];
let url: string;

beforeEach(async () => {
  url = (await testDatabase({ label: 'sweep' })).url;
});
afterEach(async () => {
  for (const pool of pools) await pool.end();
  pools = [];
});

function pool(): pg.Pool {
  const made = new pg.Pool({ connectionString: url, max: 3 });
  pools.push(made);
  return made;
}

const HOUR_MS = 60 * 60 * 1000;

/** Inserts idempotency rows: `done` ones created `ageMs` ago, or `running` claims whose lease ends in `leaseInMs`. */
async function seed(
  db: pg.Pool,
  rows: { key: string; done?: { ageMs: number }; running?: { leaseInMs: number } }[],
) {
  for (const row of rows) {
    if (row.done) {
      await db.query(
        'INSERT INTO idempotency (agent_id, key, fingerprint, operation, status, body, created_at, state) ' +
          "VALUES ('a', $1, 'f', 'memory_store', 200, '{}', now() - $2::integer * interval '1 millisecond', 'done')",
        [row.key, row.done.ageMs],
      );
    } else if (row.running) {
      await db.query(
        'INSERT INTO idempotency (agent_id, key, fingerprint, operation, created_at, state, claim_token, lease_until) ' +
          "VALUES ('a', $1, 'f', 'memory_store', now(), 'running', 't', now() + $2::integer * interval '1 millisecond')",
        [row.key, row.running.leaseInMs],
      );
    }
  }
}

async function keys(db: pg.Pool): Promise<string[]> {
  const { rows } = await db.query<{ key: string }>('SELECT key FROM idempotency ORDER BY key');
  return rows.map((r) => r.key);
}

describe('the background sweep', () => {
  it('removes idempotency records past their retention and claims whose lease ran out, nothing else', async () => {
    const db = pool();
    await seed(db, [
      { key: 'done-old', done: { ageMs: IDEMPOTENCY_RETENTION_MS + HOUR_MS } },
      { key: 'done-recent', done: { ageMs: IDEMPOTENCY_RETENTION_MS - HOUR_MS } },
      { key: 'running-expired', running: { leaseInMs: -1_000 } },
      { key: 'running-live', running: { leaseInMs: 60_000 } },
    ]);
    // Judged by the service's clock: two days back, nothing has expired yet.
    const past = () => new Date(Date.now() - 2 * IDEMPOTENCY_RETENTION_MS);
    const early = new PostgresSweeper(db, { tasks: [IDEMPOTENCY_SWEEP], intervalMs: 60_000, now: past });
    expect(await early.runOnce()).toEqual({ ran: true, removed: { idempotency: 0 } });
    const sweeper = new PostgresSweeper(db, { tasks: [IDEMPOTENCY_SWEEP], intervalMs: 60_000 });
    expect(await sweeper.runOnce()).toEqual({ ran: true, removed: { idempotency: 2 } });
    expect(await keys(db)).toEqual(['done-recent', 'running-live']);
    expect(await sweeper.runOnce()).toEqual({ ran: true, removed: { idempotency: 0 } });
  });

  it('removes memories that expired by the service clock, and no other', async () => {
    const db = pool();
    await db.query(
      "INSERT INTO accounts (id, email, key_hash, plan, balance_cents, created_at) VALUES ('a', 'a@example.com', 'h', 'pay-as-you-go', 0, now())",
    );
    for (const [key, expires] of [
      ['never', null],
      ['expired', '2026-11-23T00:00:00Z'],
      ['later', '2026-11-23T01:00:00Z'],
    ] as const) {
      await db.query(
        "INSERT INTO memories (agent_id, key, value, type, metadata, created_at, updated_at, expires_at, ttl_seconds) VALUES ('a', $1, 'v', 'fact', '{}', now(), now(), $2, $3)",
        [key, expires, expires ? 60 : null],
      );
    }
    const now = () => new Date('2026-11-23T00:30:00Z');
    const sweeper = new PostgresSweeper(db, { tasks: [MEMORY_EXPIRY_SWEEP], intervalMs: 60_000, now });
    expect(await sweeper.runOnce()).toEqual({ ran: true, removed: { 'expired memories': 1 } });
    const { rows } = await db.query('SELECT key FROM memories ORDER BY key');
    expect(rows.map((r) => r.key)).toEqual(['later', 'never']);
  });

  it('drops live-data answer counts older than the usage endpoint shows (90 days), and no others', async () => {
    const db = pool();
    await db.query(
      "INSERT INTO accounts (id, email, key_hash, plan, balance_cents, created_at) VALUES ('a', 'a@example.com', 'h', 'pay-as-you-go', 0, now())",
    );
    for (const day of ['2026-08-25', '2026-08-26', '2026-11-23'])
      await db.query("INSERT INTO live_usage (agent_id, day, state, count) VALUES ('a', $1, 'hit', 3)", [
        day,
      ]);
    // On 2026-11-23 the 90 days kept begin on 2026-08-26.
    const now = () => new Date('2026-11-23T23:59:00Z');
    const sweeper = new PostgresSweeper(db, { tasks: [USAGE_SWEEP], intervalMs: 60_000, now });
    expect(await sweeper.runOnce()).toEqual({ ran: true, removed: { 'old usage counts': 1 } });
    const { rows } = await db.query("SELECT to_char(day, 'YYYY-MM-DD') AS day FROM live_usage ORDER BY day");
    expect(rows.map((r) => r.day)).toEqual(['2026-08-26', '2026-11-23']);
  });

  it('drops the histories past their retention, keeping those of live memories and recent deletes', async () => {
    const db = pool();
    await db.query(
      "INSERT INTO accounts (id, email, key_hash, plan, balance_cents, created_at) VALUES ('a', 'a@example.com', 'h', 'pay-as-you-go', 0, now())",
    );
    await db.query(
      "INSERT INTO memories (agent_id, key, value, type, metadata, created_at, updated_at) VALUES ('a', 'live', 'v', 'fact', '{}', now(), now())",
    );
    for (const [key, version, at, deleted] of [
      ['live', 1, '2026-11-20T00:00:00Z', false],
      ['gone', 1, '2026-11-20T00:00:00Z', false],
      ['gone', 2, '2026-11-22T00:00:00Z', true],
      ['recent', 1, '2026-11-22T00:00:00Z', false],
      ['recent', 2, '2026-11-23T00:00:00Z', true],
    ] as const) {
      await db.query(
        'INSERT INTO memory_history (agent_id, key, version, at, deleted) VALUES ($1, $2, $3, $4, $5)',
        ['a', key, version, at, deleted],
      );
    }
    // A day's retention, judged at noon on the 23rd: 'gone' was last written on the 22nd at midnight.
    const now = () => new Date('2026-11-23T12:00:00Z');
    const sweeper = new PostgresSweeper(db, { tasks: [historySweep(86_400)], intervalMs: 60_000, now });
    expect(await sweeper.runOnce()).toEqual({ ran: true, removed: { 'retired histories': 2 } });
    const { rows } = await db.query('SELECT key, version FROM memory_history ORDER BY key, version');
    expect(rows).toEqual([
      { key: 'live', version: 1 },
      { key: 'recent', version: 1 },
      { key: 'recent', version: 2 },
    ]);
  });

  it('goes on batch after batch until nothing expired is left', async () => {
    const db = pool();
    await db.query(
      'INSERT INTO idempotency (agent_id, key, fingerprint, operation, status, body, created_at, state) ' +
        "SELECT 'a', 'k' || i, 'f', 'memory_store', 200, '{}', now() - interval '30 days', 'done' " +
        'FROM generate_series(1, $1::integer) AS i',
      [SWEEP_BATCH * 2 + 7],
    );
    const sweeper = new PostgresSweeper(db, { tasks: [IDEMPOTENCY_SWEEP], intervalMs: 60_000 });
    expect(await sweeper.runOnce()).toEqual({ ran: true, removed: { idempotency: SWEEP_BATCH * 2 + 7 } });
    expect(await keys(db)).toEqual([]);
  });

  it('runs on one instance at a time: a round skips while another holds the sweep lock', async () => {
    const [first, second] = [pool(), pool()];
    await seed(first, [{ key: 'done-old', done: { ageMs: IDEMPOTENCY_RETENTION_MS * 2 } }]);
    // Another instance's round under way: it holds the lock on its own connection.
    const holder = await first.connect();
    await holder.query('SELECT pg_advisory_lock($1)', [SWEEP_LOCK_KEY]);
    const sweeper = new PostgresSweeper(second, { tasks: [IDEMPOTENCY_SWEEP], intervalMs: 60_000 });
    try {
      expect(await sweeper.runOnce()).toEqual({ ran: false });
      expect(await keys(first)).toEqual(['done-old']);
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [SWEEP_LOCK_KEY]);
      holder.release();
    }
    expect(await sweeper.runOnce()).toEqual({ ran: true, removed: { idempotency: 1 } });

    // Rounds started together on two instances: exactly one runs.
    await seed(first, [{ key: 'done-old-2', done: { ageMs: IDEMPOTENCY_RETENTION_MS * 2 } }]);
    const tasks = [
      {
        name: 'slow',
        run: async (db: pg.ClientBase) => {
          await db.query('SELECT pg_sleep(0.2)');
          return 0;
        },
      },
      IDEMPOTENCY_SWEEP,
    ];
    const outcomes = await Promise.all(
      [first, second].map((db) => new PostgresSweeper(db, { tasks, intervalMs: 60_000 }).runOnce()),
    );
    expect(outcomes.filter((o) => o.ran)).toEqual([{ ran: true, removed: { slow: 0, idempotency: 1 } }]);
  });

  it('runs on its interval once started, and a failed round (database out of reach) does not stop it', async () => {
    const db = pool();
    const rounds: (SweepOutcome | { error: unknown })[] = [];
    let failNext = true;
    const sweeper = new PostgresSweeper(db, {
      tasks: [
        {
          name: 'flaky',
          run: async () => {
            if (failNext) {
              failNext = false;
              throw Object.assign(new Error('connection terminated'), { code: '57P01' });
            }
            return 0;
          },
        },
      ],
      intervalMs: 50,
      onRound: (outcome) => rounds.push(outcome),
    });
    sweeper.start();
    await expect.poll(() => rounds.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    await sweeper.stop();
    expect(rounds[0]).toHaveProperty('error');
    expect(rounds[1]).toEqual({ ran: true, removed: { flaky: 0 } });
    // The failed round let go of the lock: another instance can sweep.
    expect(await new PostgresSweeper(pool(), { tasks: [], intervalMs: 60_000 }).runOnce()).toEqual({
      ran: true,
      removed: {},
    });
  });
});
