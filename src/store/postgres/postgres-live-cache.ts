/**
 * The live-data cache shared by every instance on one database (issue 13): a fresh fetch by one instance is
 * a free cache hit on every other, and a burst of identical requests spread over instances makes one
 * upstream call and one charge.
 *
 * - Two levels. The first is this process's node-cache (`peek`, no I/O: the hot path); an entry there is
 *   good for any request whose cache_minutes it meets, the core decides. The second is the UNLOGGED
 *   `live_cache` table, read by primary key when the first level has nothing fresh enough (`get`), and
 *   upserted by `set`, which the core calls only after the debit committed. An upsert never replaces a
 *   newer row with an older one (one fetched at the same instant, stored later, does replace it).
 * - Single-flight across instances. The core runs one flight per key in its process; that flight asks here
 *   for the key's lease, a row of the UNLOGGED `live_flights` table taken by one upsert that succeeds only
 *   where no unexpired lease of another instance exists. The holder fetches, stores the result, then
 *   deletes its lease (also when it failed, so that nobody waits for it). The others poll, every `pollMs`,
 *   one primary-key statement that reads both the key's cache row and lease in one snapshot: a row newer
 *   than the one they knew is the leader's result; no live lease and no new row means the leader ended
 *   without one (the core then asks for the lease again).
 * - Leases are short and renewed: one lasts `leaseMs` (6 s) and its holder extends it every third of that
 *   while it works, so that an instance killed mid-fetch blocks its key for at most `leaseMs`, not for a
 *   whole fetch budget, while a slow fetch keeps its lease. A follower gives up waiting after `maxWaitMs`
 *   (the provider chain's 15 s budget plus 5 s for the debit and the cache write) even if the lease is
 *   still renewed, and the core asks for the lease again.
 * - Polling rather than LISTEN/NOTIFY: waits happen only while a fetch is under way (a few looks per fetch,
 *   at most one waiting flight per key per instance), it needs no dedicated connection and no reconnect
 *   logic, and NOTIFY would take a database-wide lock at every commit that signals. A follower learns of
 *   the result at most `pollMs` (50 ms) late.
 * - Lease times are the database's clock (`now()`), so instances with skewed clocks agree on expiry; a
 *   waiting follower compares cache rows by their `fetched_at`, never with its own clock.
 * - Failures: a result that cannot be shared (the database is out of reach at `set`) stays in the first
 *   level; a lease that cannot be ended expires. Reads that cannot reach the database fail with the
 *   `unavailable` error, as the store's do.
 * - Old rows: `sweepTasks` (for the background sweeper, postgres-sweeper.ts) delete cache
 *   rows older than the longest cache_minutes allowed (by the service's clock, which wrote `fetched_at`),
 *   and leases that ran out (by the database's).
 * - The pool is the PostgresStore's, which owns it and ends it on close.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { createNodeLiveCache } from '../../cache/node-live-cache.js';
import type { CachedLiveResult, LiveCache } from '../../core/live-port.js';
import { queryReachable } from './postgres-errors.js';
import type { SweepTask } from './postgres-sweeper.js';

/** How long a lease lasts unless renewed; its holder renews it every third of this. */
export const DEFAULT_LEASE_MS = 6_000;
/** The longest a follower waits: the provider chain's time budget (15 s) plus 5 s for the debit and the write. */
export const DEFAULT_MAX_WAIT_MS = 20_000;
/** How long a follower waits between two looks at the leader's progress. */
export const DEFAULT_POLL_MS = 50;

/** `$n` milliseconds as an interval. */
const ms = (n: number) => `($${n}::bigint * interval '1 millisecond')`;

const GET = 'SELECT value FROM live_cache WHERE key = $1 AND fetched_at > $2::timestamptz';

const UPSERT =
  'INSERT INTO live_cache AS c (key, value, fetched_at) VALUES ($1, $2, $3) ON CONFLICT (key) DO UPDATE ' +
  'SET value = EXCLUDED.value, fetched_at = EXCLUDED.fetched_at WHERE c.fetched_at <= EXCLUDED.fetched_at';

// A lease is taken when the key has none, when its lease ran out, or when it is this instance's own (left
// over from a lease that could not be ended: the core runs one flight per key per process).
const LEAD =
  `INSERT INTO live_flights AS f (key, owner, lease_until) VALUES ($1, $2, now() + ${ms(3)}) ` +
  'ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until ' +
  'WHERE f.lease_until < now() OR f.owner = EXCLUDED.owner RETURNING owner';

// One snapshot for both: the leader writes its row before it deletes its lease.
const WAIT =
  'SELECT (SELECT value FROM live_cache WHERE key = $1 AND fetched_at > $2::timestamptz) AS value, ' +
  'EXISTS (SELECT 1 FROM live_flights WHERE key = $1 AND lease_until >= now()) AS leased';

const RENEW = `UPDATE live_flights SET lease_until = now() + ${ms(3)} WHERE key = $1 AND owner = $2`;

const END = 'DELETE FROM live_flights WHERE key = $1 AND owner = $2';

// fetched_at is the service's clock (the core's), so age is judged by it; leases by the database's.
const SWEEP_ENTRIES =
  'DELETE FROM live_cache WHERE key IN (SELECT key FROM live_cache ' +
  `WHERE fetched_at < $3::timestamptz - ${ms(1)} LIMIT $2 FOR UPDATE SKIP LOCKED)`;

const SWEEP_FLIGHTS =
  'DELETE FROM live_flights WHERE key IN (SELECT key FROM live_flights ' +
  'WHERE lease_until < now() LIMIT $1 FOR UPDATE SKIP LOCKED)';

/** What runs one statement: the pool, or one of its connections (the sweeper's). */
interface Queryable {
  query(text: string, values: unknown[]): Promise<{ rowCount: number | null }>;
}

export interface PostgresLiveCacheOptions {
  /** The longest cache_minutes a request may ask for: how long either level keeps an entry. */
  maxAgeMinutes: number;
  /** How long a lease lasts unless renewed; DEFAULT_LEASE_MS unless given. */
  leaseMs?: number;
  /** The longest a follower waits for one flight; DEFAULT_MAX_WAIT_MS unless given. */
  maxWaitMs?: number;
  /** A waiting follower's interval between looks; DEFAULT_POLL_MS unless given. */
  pollMs?: number;
  /** This instance's name on its leases; a random one unless given. */
  owner?: string;
  /** Entries kept in this process's level (the oldest go first). */
  maxKeys?: number;
}

export class PostgresLiveCache implements LiveCache {
  readonly owner: string;
  readonly leaseMs: number;
  private readonly maxWaitMs: number;
  private readonly pollMs: number;
  private readonly maxAgeMs: number;
  private readonly local: LiveCache;
  /** The renewal timers of the leases this instance holds, by key. */
  private readonly renewals = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    options: PostgresLiveCacheOptions,
  ) {
    this.owner = options.owner ?? randomUUID();
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.maxAgeMs = options.maxAgeMinutes * 60_000;
    this.local = createNodeLiveCache(options.maxAgeMinutes, options.maxKeys);
  }

  peek(key: string): CachedLiveResult | undefined {
    return this.local.peek(key);
  }

  async get(key: string): Promise<CachedLiveResult | undefined> {
    const own = this.local.peek(key);
    const { rows } = await this.query<{ value: CachedLiveResult }>(GET, [key, own?.fetchedAt ?? '-infinity']);
    return rows[0] ? this.keep(key, rows[0].value) : own;
  }

  async set(key: string, value: CachedLiveResult): Promise<void> {
    this.keep(key, value);
    try {
      await this.pool.query(UPSERT, [key, JSON.stringify(value), value.fetchedAt]);
    } catch {
      // Not shared is all that goes wrong: the result was paid for and is served from this process.
    }
  }

  async lead(key: string): Promise<'leader' | 'follower'> {
    const { rows } = await this.query(LEAD, [key, this.owner, this.leaseMs]);
    if (rows.length === 0) return 'follower';
    this.renewWhileLeading(key);
    return 'leader';
  }

  async waitFor(key: string, after: string | undefined): Promise<CachedLiveResult | undefined> {
    const until = Date.now() + this.maxWaitMs;
    for (;;) {
      const { rows } = await this.query<{ value: CachedLiveResult | null; leased: boolean }>(WAIT, [
        key,
        after ?? '-infinity',
      ]);
      const row = rows[0];
      if (row?.value) return this.keep(key, row.value);
      if (!row?.leased || this.closed || Date.now() >= until) return undefined;
      await sleep(Math.min(this.pollMs, Math.max(0, until - Date.now())));
    }
  }

  async endFlight(key: string): Promise<void> {
    clearInterval(this.renewals.get(key));
    this.renewals.delete(key);
    try {
      await this.pool.query(END, [key, this.owner]);
    } catch {
      // A lease that cannot be deleted now expires by itself.
    }
  }

  /** The sweeper's tasks: cache rows older than the longest cache_minutes, and leases that ran out. */
  get sweepTasks(): readonly SweepTask[] {
    return [
      { name: 'live_cache', run: (db, batch, now) => sweepEntries(db, this.maxAgeMs, batch, now) },
      { name: 'live_flights', run: (db, batch) => sweepFlights(db, batch) },
    ];
  }

  /** Rows of the shared table: results, including expired ones the sweep has not removed yet. */
  async entries(): Promise<number> {
    const { rows } = await queryReachable<{ n: string }>(
      this.pool,
      'SELECT count(*) AS n FROM live_cache',
      [],
    );
    return Number(rows[0]?.n ?? 0);
  }

  close(): void {
    this.closed = true;
    for (const timer of this.renewals.values()) clearInterval(timer);
    this.renewals.clear();
    this.local.close();
  }

  /** Extends the lease of `key` every third of its length until `endFlight` (or close). */
  private renewWhileLeading(key: string): void {
    clearInterval(this.renewals.get(key));
    const timer = setInterval(
      () => {
        // A renewal that fails leaves the lease to run out: at worst another instance fetches too.
        Promise.resolve()
          .then(() => this.pool.query(RENEW, [key, this.owner, this.leaseMs]))
          .catch(() => undefined);
      },
      Math.max(1, Math.floor(this.leaseMs / 3)),
    );
    timer.unref();
    this.renewals.set(key, timer);
  }

  /** Keeps `value` in this process's level too (frozen), and returns it. */
  private keep(key: string, value: CachedLiveResult): CachedLiveResult {
    void this.local.set(key, value);
    return value;
  }

  /** Runs one statement, a database out of reach turned into the `unavailable` error. */
  private query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    return queryReachable<R>(this.pool, text, values);
  }
}

async function sweepEntries(db: Queryable, maxAgeMs: number, batch: number, now: Date): Promise<number> {
  return (await db.query(SWEEP_ENTRIES, [maxAgeMs, batch, now.toISOString()])).rowCount ?? 0;
}

async function sweepFlights(db: Queryable, batch: number): Promise<number> {
  return (await db.query(SWEEP_FLIGHTS, [batch])).rowCount ?? 0;
}
