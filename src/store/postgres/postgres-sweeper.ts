/**
 * Background clean-up on a shared database, run by one instance at a time: every instance wakes on an
 * interval, and the one that takes the sweep's advisory lock (`pg_try_advisory_lock`, held by its
 * connection's session: the database frees it if that instance dies) runs every task; the others skip that
 * round, so N instances do the work once, not N times. A task deletes what has expired in batches (`LIMIT`
 * over a sub-select, `SKIP LOCKED`), each statement committing by itself, so no round holds row locks for
 * long or waits on a request's rows; a task that removed a full batch goes on with the next.
 *
 * Tasks: idempotency records past their retention and claims whose lease ran out (the request's process
 * died), expired memories, and whatever the shared caches and counters register (live_cache, live_flights, rate_limits).
 */
import type pg from 'pg';
import { firstUsageDayKept, IDEMPOTENCY_RETENTION_MS } from '../../core/model.js';
import { BackgroundRounds, type SweepOutcome } from '../background-rounds.js';

/** The advisory lock key of the sweep: a constant of this schema (the characters "acsweep" as a number). */
export const SWEEP_LOCK_KEY = 0x61_63_73_77_65_65_70;

/** How often each instance tries to sweep. */
export const SWEEP_INTERVAL_MS = 60_000;

/** Rows a task deletes in one statement. */
export const SWEEP_BATCH = 5_000;

export interface SweepTask {
  /** For the log: what it removes. */
  name: string;
  /**
   * Deletes up to `batch` rows expired at `now` (the service's clock) through `db` (one statement, committed
   * by itself); returns how many.
   */
  run(db: pg.ClientBase, batch: number, now: Date): Promise<number>;
}

/** Idempotency records older than the retention (their keys may be used again) and claims whose lease ran out. */
export const IDEMPOTENCY_SWEEP: SweepTask = {
  name: 'idempotency',
  run: async (db, batch, now) => {
    const { rowCount } = await db.query(
      'DELETE FROM idempotency WHERE (agent_id, key) IN (SELECT agent_id, key FROM idempotency WHERE ' +
        "(state = 'done' AND created_at < $3::timestamptz - $1::integer * interval '1 millisecond') OR " +
        "(state = 'running' AND lease_until < $3::timestamptz) LIMIT $2 FOR UPDATE SKIP LOCKED)",
      [IDEMPOTENCY_RETENTION_MS, batch, now.toISOString()],
    );
    return rowCount ?? 0;
  },
};

/** Memories that expired: absent to every read already, removed here. */
export const MEMORY_EXPIRY_SWEEP: SweepTask = {
  name: 'expired memories',
  run: async (db, batch, now) => {
    const { rowCount } = await db.query(
      'DELETE FROM memories WHERE (agent_id, key) IN (SELECT agent_id, key FROM memories WHERE ' +
        'expires_at <= $2::timestamptz LIMIT $1 FOR UPDATE SKIP LOCKED)',
      [batch, now.toISOString()],
    );
    return rowCount ?? 0;
  },
};

/**
 * Histories past their retention: keys without a live memory whose newest entry was written more than
 * `retentionSeconds` ago (by then a delete can no longer be undone).
 */
export function historySweep(retentionSeconds: number): SweepTask {
  return {
    name: 'retired histories',
    run: async (db, batch, now) => {
      const { rowCount } = await db.query(
        'DELETE FROM memory_history WHERE (agent_id, key) IN (SELECT h.agent_id, h.key FROM memory_history h ' +
          'GROUP BY h.agent_id, h.key ' +
          "HAVING max(h.at) < $2::timestamptz - $3::integer * interval '1 second' AND NOT EXISTS (" +
          'SELECT 1 FROM memories m WHERE m.agent_id = h.agent_id AND m.key = h.key ' +
          'AND (m.expires_at IS NULL OR m.expires_at > $2::timestamptz)) LIMIT $1)',
        [batch, now.toISOString(), retentionSeconds],
      );
      return rowCount ?? 0;
    },
  };
}

/** Live-data answer counts of days older than the usage endpoint shows (USAGE_DAYS_KEPT). */
export const USAGE_SWEEP: SweepTask = {
  name: 'old usage counts',
  run: async (db, batch, now) => {
    const { rowCount } = await db.query(
      'DELETE FROM live_usage WHERE (agent_id, day, state) IN (SELECT agent_id, day, state FROM live_usage ' +
        'WHERE day < $2::date LIMIT $1 FOR UPDATE SKIP LOCKED)',
      [batch, firstUsageDayKept(now)],
    );
    return rowCount ?? 0;
  },
};

export interface SweeperOptions {
  tasks: readonly SweepTask[];
  /** How often each instance tries to sweep; the first round comes one interval after start(). */
  intervalMs: number;
  /**
   * The service's clock: what has expired is judged by it, as the claims that treat old records as gone are
   * (a test's manual clock then sweeps nothing the service still replays).
   */
  now?: () => Date;
  /** Told what a round removed, or why it failed (the database out of reach: the next round tries again). */
  onRound?: (outcome: SweepOutcome | { error: unknown }) => void;
}

export class PostgresSweeper extends BackgroundRounds<SweepOutcome> {
  constructor(
    private readonly pool: Pick<pg.Pool, 'connect'>,
    private readonly options: SweeperOptions,
  ) {
    super(options.intervalMs, options.onRound);
  }

  /** One round: nothing when another instance holds the sweep lock, else every task until it has no more. */
  async runOnce(): Promise<SweepOutcome> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    const onError = (err: Error) => {
      broken ??= err; // a connection lost while checked out: the statement under way fails, the process does not
    };
    client.on('error', onError);
    let locked = false;
    const now = this.options.now?.() ?? new Date();
    try {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        SWEEP_LOCK_KEY,
      ]);
      locked = rows[0]?.locked === true;
      if (!locked) return { ran: false };
      const removed: Record<string, number> = {};
      for (const task of this.options.tasks) {
        let total = 0;
        for (;;) {
          // Each batch commits on its own, so that rows are locked only for the length of one statement.
          const count = await task.run(client, SWEEP_BATCH, now);
          total += count;
          if (count < SWEEP_BATCH) break;
        }
        removed[task.name] = total;
      }
      return { ran: true, removed };
    } finally {
      // A session lock: released here, or by the database if this connection dies first.
      if (locked && !broken) {
        await client.query('SELECT pg_advisory_unlock($1)', [SWEEP_LOCK_KEY]).catch((err: Error) => {
          broken ??= err;
        });
      }
      client.off('error', onError);
      // A connection that failed is dropped from the pool (and with it the lock, if the unlock failed).
      client.release(broken);
    }
  }
}
