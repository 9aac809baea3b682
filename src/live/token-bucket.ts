/**
 * A token bucket per upstream provider, set below the provider's published limit, so that this service
 * never earns itself a ban: a call takes a token; without one the provider is skipped for now, and the
 * chain may wait `msUntilToken()` for it (the bucket itself never sleeps).
 */
/** Refills are computed in floating point; a token short by less than this counts as whole. */
const EPSILON = 1e-9;

export class TokenBucket {
  private tokens: number;
  private last: number;

  /**
   * @param perMinute sustained rate
   * @param burst bucket size (default: ten seconds' worth, at least 1)
   */
  constructor(
    private readonly perMinute: number,
    private readonly burst = Math.max(1, Math.ceil(perMinute / 6)),
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 60_000) * this.perMinute);
    this.last = now;
  }

  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1 - EPSILON) return false;
    this.tokens -= 1;
    return true;
  }

  /** Gives back a token taken for a call that was not made (never above the bucket's size). */
  refund(): void {
    this.refill();
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  /** Tokens now, of at most `capacity`. */
  level(): { available: number; capacity: number } {
    this.refill();
    return { available: this.tokens, capacity: this.burst };
  }

  /** Milliseconds until a token is available: 0 when one is now, otherwise at least 1. */
  msUntilToken(): number {
    this.refill();
    const missing = 1 - this.tokens;
    if (missing <= EPSILON) return 0;
    return Math.max(1, Math.ceil((missing * 60_000) / this.perMinute - 1e-6));
  }
}
