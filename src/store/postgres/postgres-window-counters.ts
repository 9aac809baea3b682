/**
 * Fixed-window counters (src/store/window-counters.ts) in the UNLOGGED `rate_limits` table, for the rate
 * limits of many instances on one database (issue 13). One row per key, reused from window to window.
 *
 * - A hit is one statement, an upsert: PostgreSQL's ON CONFLICT DO UPDATE locks the key's row and computes
 *   the new count from its latest version, so concurrent hits from any number of instances are counted
 *   exactly, each key on its own row lock (no table lock, unlike the rate-limit-postgresql package).
 * - Windows are MemoryStore's: a window starts at a key's first hit and lasts `windowMs`; the first hit at
 *   or after its end starts the next one at 1. "Now" is the database's clock (`now()`, truncated to the
 *   millisecond so that the reset time a client is told is never later than the real one), so instances
 *   with skewed clocks agree on every window. The window's length is not stored: each limiter has its own
 *   key prefix and one window, and passes it on every call.
 * - Ended windows: the row is reused by the key's next hit; the background sweep (`sweepTasks`) deletes rows
 *   of keys not seen for longer than the longest window, in batches, skipping rows that a hit holds.
 * - The pool is the PostgresStore's, which owns it and ends it on close.
 */
import type pg from 'pg';
import type { WindowCount, WindowCounters } from '../window-counters.js';
import { queryReachable } from './postgres-errors.js';
import type { SweepTask } from './postgres-sweeper.js';

/** The longest window of the service's limiters (registrations: an hour). */
export const DEFAULT_MAX_WINDOW_MS = 60 * 60_000;

/** Now, by the database's clock, to the millisecond. */
const NOW = "date_trunc('milliseconds', now())";
/** `$2` milliseconds as an interval. */
const WINDOW = "($2::integer * interval '1 millisecond')";

const INCREMENT =
  `INSERT INTO rate_limits AS r (key, window_start, hits) VALUES ($1, ${NOW}, 1) ` +
  'ON CONFLICT (key) DO UPDATE SET ' +
  `hits = CASE WHEN r.window_start + ${WINDOW} > EXCLUDED.window_start THEN r.hits + 1 ELSE 1 END, ` +
  `window_start = CASE WHEN r.window_start + ${WINDOW} > EXCLUDED.window_start ` +
  'THEN r.window_start ELSE EXCLUDED.window_start END ' +
  `RETURNING hits, window_start + ${WINDOW} AS reset_at`;

const GET =
  `SELECT hits, window_start + ${WINDOW} AS reset_at FROM rate_limits ` +
  `WHERE key = $1 AND window_start + ${WINDOW} > ${NOW}`;

const SWEEP =
  'DELETE FROM rate_limits WHERE key IN (SELECT key FROM rate_limits ' +
  "WHERE window_start < now() - ($1::integer * interval '1 millisecond') LIMIT $2 FOR UPDATE SKIP LOCKED)";

interface CountRow {
  hits: number;
  reset_at: Date;
}

export interface PostgresWindowCountersOptions {
  /** The longest window accepted, and how long the sweep keeps a row; an hour unless given. */
  maxWindowMs?: number;
}

export class PostgresWindowCounters implements WindowCounters {
  readonly maxWindowMs: number;

  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    options: PostgresWindowCountersOptions = {},
  ) {
    this.maxWindowMs = options.maxWindowMs ?? DEFAULT_MAX_WINDOW_MS;
  }

  async increment(key: string, windowMs: number): Promise<WindowCount> {
    this.checkWindow(windowMs);
    const { rows } = await this.query<CountRow>(INCREMENT, [key, windowMs]);
    return toCount(rows[0] as CountRow);
  }

  async get(key: string, windowMs: number): Promise<WindowCount | undefined> {
    this.checkWindow(windowMs);
    const { rows } = await this.query<CountRow>(GET, [key, windowMs]);
    return rows[0] === undefined ? undefined : toCount(rows[0]);
  }

  async decrement(key: string): Promise<void> {
    await this.query('UPDATE rate_limits SET hits = hits - 1 WHERE key = $1 AND hits > 0', [key]);
  }

  async reset(key: string): Promise<void> {
    await this.query('DELETE FROM rate_limits WHERE key = $1', [key]);
  }

  /** For the background sweeper (postgres-sweeper.ts): counters whose window started over `maxWindowMs` ago. */
  get sweepTasks(): readonly SweepTask[] {
    return [
      {
        name: 'rate_limits',
        run: async (db, batch) => (await db.query(SWEEP, [this.maxWindowMs, batch])).rowCount ?? 0,
      },
    ];
  }

  private checkWindow(windowMs: number): void {
    if (!Number.isInteger(windowMs) || windowMs < 1 || windowMs > this.maxWindowMs) {
      throw new RangeError(
        `A counter window must be a whole number of milliseconds from 1 to ${this.maxWindowMs}; got ${windowMs}.`,
      );
    }
  }

  /** Runs one statement, a database out of reach turned into the `unavailable` error. */
  private query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    return queryReachable<R>(this.pool, text, values);
  }
}

function toCount(row: CountRow): WindowCount {
  return { hits: Number(row.hits), resetAt: new Date(row.reset_at) };
}
