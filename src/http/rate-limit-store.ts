/**
 * An express-rate-limit Store over the shared window counters (src/store/window-counters.ts), so that on
 * PostgreSQL a client's requests are counted across every instance rather than per process. One store per
 * limiter (express-rate-limit refuses to share one), each with its own key prefix, so that the limiters
 * that key by the same thing (the unauthenticated and the per-address registration limits both count
 * `address:…`) keep separate counts.
 */
import type { ClientRateLimitInfo, IncrementResponse, Options, Store } from 'express-rate-limit';
import type { WindowCount, WindowCounters } from '../store/window-counters.js';

export interface CounterStoreOptions {
  /** Put before every key of this limiter, e.g. `per-key:`. */
  prefix: string;
  /** The limiter's window; also checked against the counters' longest. */
  windowMs: number;
}

export class CounterStore implements Store {
  /** Keys counted here are seen by every instance (express-rate-limit's double-count check). */
  readonly localKeys = false;
  readonly prefix: string;
  private readonly windowMs: number;

  constructor(
    private readonly counters: WindowCounters,
    options: CounterStoreOptions,
  ) {
    // Thrown while the app is built, so a limiter the counters cannot hold stops the start.
    if (options.windowMs > counters.maxWindowMs) {
      throw new RangeError(
        `The rate limit window ${options.windowMs} ms is longer than the shared counters keep ` +
          `(${counters.maxWindowMs} ms).`,
      );
    }
    this.prefix = options.prefix;
    this.windowMs = options.windowMs;
  }

  init(options: Options): void {
    if (options.windowMs !== this.windowMs) {
      throw new Error(
        `The rate limiter's window (${options.windowMs} ms) is not its store's (${this.windowMs} ms).`,
      );
    }
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const count = await this.counters.get(this.prefix + key, this.windowMs);
    return count === undefined ? undefined : toInfo(count);
  }

  async increment(key: string): Promise<IncrementResponse> {
    return toInfo(await this.counters.increment(this.prefix + key, this.windowMs));
  }

  decrement(key: string): Promise<void> {
    return this.counters.decrement(this.prefix + key);
  }

  resetKey(key: string): Promise<void> {
    return this.counters.reset(this.prefix + key);
  }
}

function toInfo(count: WindowCount): ClientRateLimitInfo {
  return { totalHits: count.hits, resetTime: count.resetAt };
}
