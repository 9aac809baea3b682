/**
 * A token bucket per upstream provider, set below the provider's published limit, so that this service
 * never earns itself a ban: a call takes a token; without one the provider is skipped for this request
 * (the chain moves on to the next provider).
 */
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

  tryTake(): boolean {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 60_000) * this.perMinute);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}
