/**
 * A circuit breaker per upstream provider: after `threshold` consecutive failures (or at once when the
 * upstream says how long to wait, Retry-After), the provider is skipped until the pause is over; then one
 * trial call is let through (half-open), which closes the breaker on success or re-opens it on failure.
 * Hand-written rather than a library's because it must take its pause from Retry-After and its time from
 * an injected clock (tests move time instead of sleeping).
 */

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  /** Consecutive failures that open the breaker (default 5). */
  threshold?: number;
  /** How long it stays open before a trial call, in ms (default 60 s). */
  pauseMs?: number;
  now?: () => number;
}

export class CircuitBreaker {
  private failures = 0;
  private openUntil = 0;
  private trialInFlight = false;
  private readonly threshold: number;
  private readonly pauseMs: number;
  private readonly now: () => number;

  constructor(options: BreakerOptions = {}) {
    this.threshold = options.threshold ?? 5;
    this.pauseMs = options.pauseMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  get state(): BreakerState {
    if (this.openUntil === 0) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half-open';
  }

  /** Whether a call may go out now; in half-open state only one trial at a time. */
  allow(): boolean {
    const state = this.state;
    if (state === 'closed') return true;
    if (state === 'open' || this.trialInFlight) return false;
    this.trialInFlight = true;
    return true;
  }

  /** The call that allow() let through did not happen (e.g. no token): free the trial slot, change nothing else. */
  cancel(): void {
    this.trialInFlight = false;
  }

  success(): void {
    this.failures = 0;
    this.openUntil = 0;
    this.trialInFlight = false;
  }

  /** @param retryAfterS the upstream's own Retry-After, which opens the breaker for that long at once. */
  failure(retryAfterS?: number): void {
    this.failures++;
    const wasTrial = this.trialInFlight;
    this.trialInFlight = false;
    if (retryAfterS !== undefined && retryAfterS > 0) {
      this.openUntil = this.now() + retryAfterS * 1000;
    } else if (wasTrial || this.failures >= this.threshold) {
      this.openUntil = this.now() + this.pauseMs;
    }
  }
}
