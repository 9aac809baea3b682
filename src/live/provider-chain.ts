/**
 * An ordered chain of providers for one kind of data: the first that returns a valid result wins; the
 * others are tried in turn within one time budget. A provider whose breaker is open or whose token bucket
 * is empty is skipped. "Not found" from one provider does not stop the chain (another may know the
 * place or asset), but if nobody found it and some provider said so, the answer is not_found.
 */
import { AppError, type ErrorDetails } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { TokenBucket } from './token-bucket.js';

export interface Provider<Q = string> {
  /** Stable name, used in AC_*_PROVIDERS and as `source`. */
  id: string;
  /** Sustained calls per minute this service allows itself (below the published limit). */
  perMinute: number;
  fetch(query: Q, deadline: number): Promise<LiveResult>;
}

export interface ChainOptions {
  /** Total time for one request across providers, retries included (default 15 s). */
  budgetMs?: number;
  now?: () => number;
  breaker?: { threshold?: number; pauseMs?: number };
}

interface Guarded<Q> {
  provider: Provider<Q>;
  breaker: CircuitBreaker;
  bucket: TokenBucket;
}

export class ProviderChain<Q = string> {
  private readonly guarded: Guarded<Q>[];
  private readonly budgetMs: number;
  private readonly now: () => number;

  constructor(
    readonly label: string,
    providers: Provider<Q>[],
    options: ChainOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.budgetMs = options.budgetMs ?? 15_000;
    this.guarded = providers.map((provider) => ({
      provider,
      breaker: new CircuitBreaker({ ...options.breaker, now: this.now }),
      bucket: new TokenBucket(provider.perMinute, undefined, this.now),
    }));
  }

  get providerIds(): string[] {
    return this.guarded.map((g) => g.provider.id);
  }

  /** The breaker state of each provider, for tests and diagnostics. */
  breakerStates(): Record<string, string> {
    return Object.fromEntries(this.guarded.map((g) => [g.provider.id, g.breaker.state]));
  }

  async fetch(query: Q): Promise<LiveResult> {
    const deadline = this.now() + this.budgetMs;
    const failures: AppError[] = [];
    let notFound: AppError | undefined;
    for (const { provider, breaker, bucket } of this.guarded) {
      if (this.now() >= deadline) break;
      if (!breaker.allow()) continue;
      if (!bucket.tryTake()) {
        breaker.cancel(); // no call was made: a half-open trial stays available
        continue;
      }
      try {
        const result = await provider.fetch(query, deadline);
        breaker.success();
        return result;
      } catch (err) {
        const error = err instanceof AppError ? err : new AppError('upstream_failed', String(err), {}, err);
        if (error.code === 'not_found') {
          breaker.success(); // the upstream works; it just does not know this query
          notFound ??= error;
          continue;
        }
        const retryAfter = error.details.retry_after_s;
        breaker.failure(typeof retryAfter === 'number' ? retryAfter : undefined);
        failures.push(error);
      }
    }
    if (notFound) throw notFound;
    throw this.exhausted(failures);
  }

  private exhausted(failures: AppError[]): AppError {
    const details: ErrorDetails = { source: this.providerIds.join(',') };
    const waits = failures
      .map((f) => f.details.retry_after_s)
      .filter((s): s is number => typeof s === 'number');
    if (waits.length > 0) details.retry_after_s = Math.min(...waits);
    if (failures.length === 0) {
      return new AppError(
        'upstream_failed',
        `Every ${this.label} upstream is paused after recent failures or rate limits; nothing was charged, try again in a minute.`,
        { ...details, retry_after_s: details.retry_after_s ?? 60 },
      );
    }
    if (failures.length === 1) return failures[0] as AppError;
    const allTimedOut = failures.every((f) => f.code === 'upstream_timeout');
    const tried = failures
      .map((f) => f.details.source)
      .filter(Boolean)
      .join(', ');
    return new AppError(
      allTimedOut ? 'upstream_timeout' : 'upstream_failed',
      `Every ${this.label} upstream failed (${tried}); nothing was charged, try again later.`,
      details,
      new AggregateError(failures),
    );
  }
}
