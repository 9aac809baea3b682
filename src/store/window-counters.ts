/**
 * The port for fixed-window hit counters that every instance of the service shares: the rate limits count a
 * client's requests here when the service runs as many instances on one database (the HTTP face adapts it
 * to express-rate-limit in src/http/rate-limit-store.ts; the PostgreSQL adapter is
 * src/store/postgres/postgres-window-counters.ts). A single process keeps its counts in memory instead and
 * needs no such port.
 *
 * A window starts with a key's first hit and lasts `windowMs` (express-rate-limit's MemoryStore does the
 * same); the first hit after it ended starts the next one, counting from 1. Time is the counters' own clock
 * (the database's), so that instances whose clocks differ agree on when a window ends.
 */

/** A key's count in its current window. */
export interface WindowCount {
  /** Hits in the current window, the one just counted included. */
  hits: number;
  /** When the current window ends: the next hit after it starts a new window. */
  resetAt: Date;
}

export interface WindowCounters {
  /**
   * The longest window `increment` and `get` accept (longer is a RangeError). A store that keeps counters
   * deletes those that started longer ago than this (every one of them has ended) in the background.
   */
  readonly maxWindowMs: number;
  /**
   * Counts one hit of `key` and returns its count, atomically across instances: n concurrent calls on one
   * key in one window return 1..n, each once.
   */
  increment(key: string, windowMs: number): Promise<WindowCount>;
  /** The count of `key` in its current window, or undefined when it has none (never hit, or ended). */
  get(key: string, windowMs: number): Promise<WindowCount | undefined>;
  /** Takes back one hit of `key` (never below 0); nothing when the key has none. */
  decrement(key: string): Promise<void>;
  /** Forgets `key`: its next hit starts a new window. */
  reset(key: string): Promise<void>;
}
