/**
 * An ordered chain of providers for one kind of data: the first that returns a valid, non-empty result
 * wins; the others are tried in turn within one time budget. A provider whose breaker is open is skipped.
 * A provider whose token bucket is empty is skipped for now; when a pass over the chain ends without an
 * answer and some provider lacked only a token, the chain waits for the first token (if that fits the
 * budget) and tries those again, else fails saying when there is capacity. An empty result (news or search
 * with no hits) moves on to the next provider; only when every provider that answered was empty is the
 * answer empty. "Not found" from one provider does not stop the chain (another may know the place or
 * asset), but if nobody found it and some provider said so, the answer is not_found. Every answer names
 * the providers asked. A provider whose own call needed another chain's provider that lacked only a token
 * (MET Norway waiting for a geocoder: a NoCapacityError) counts as lacking a token itself: it is not
 * blamed, and it is tried again after the wait. A provider whose call needed what another chain could not
 * give (coordinates when every geocoder failed: an UnmetNeedError) is skipped at once, not blamed; that
 * failure counts once in the answer, however many providers needed it.
 *
 * Budget rule: a provider never spends the share the rest of the chain needs. Each call gets its own
 * deadline, the request's deadline minus `reserveMs` (3 s) for every later provider that may still be
 * asked in this request (not asked yet, breaker not open), but never less than an equal share of the time
 * left among it and those later providers.
 */
import { AppError, type ErrorDetails } from '../core/errors.js';
import type { LiveResult, ProviderCall, ProviderStatus } from '../core/live-port.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { TokenBucket } from './token-bucket.js';

export interface Provider<Q = string> {
  /** Stable name, used in AC_*_PROVIDERS and as `source`. */
  id: string;
  /** Sustained calls per minute this service allows itself (below the published limit). */
  perMinute: number;
  /** Its bucket's size (default: ten seconds' worth). */
  burst?: number;
  /**
   * One call: `deadline` is this provider's share of the request's budget (epoch ms); `scope` is the
   * request's, shared by every provider the request asks, in this chain and in the chains they ask.
   */
  fetch(query: Q, deadline: number, scope: RequestScope): Promise<LiveResult>;
}

/**
 * What the providers one request asks share, and only they: memos by key (a geocoded place, or the failure
 * to find it, asked once and shared by every weather provider that needs coordinates). It lives as long as
 * the request, so nothing is shared between requests by accident and nothing has to be swept.
 */
export class RequestScope {
  private readonly memos = new Map<string, unknown>();

  /** The request's value under `key`, made by `create` the first time it is asked for. */
  memo<T>(key: string, create: () => T): T {
    if (!this.memos.has(key)) this.memos.set(key, create());
    return this.memos.get(key) as T;
  }
}

/**
 * How far one request got through a chain: the providers it asked or skipped, their failures, a not-found
 * and an empty answer. A chain asked again within the same request (the geocoding chain, after its caller
 * waited for a token) goes on from there, so a provider that failed is not asked twice in one request.
 */
export class ChainProgress {
  /** Providers asked (or skipped for an unmet need) in this request: not asked again. */
  readonly done = new Set<string>();
  /** Providers tried, in order (those skipped for an unmet need included): the answer's providersAsked. */
  readonly asked: string[] = [];
  readonly failures: AppError[] = [];
  notFound: AppError | undefined;
  empty: LiveResult | undefined;
}

export interface FetchOptions {
  /** A deadline (epoch ms) of the caller, when it is sooner than this chain's own budget. */
  deadline?: number;
  /**
   * Whether to wait for a token when that is all that is missing (default true). A chain asked by another
   * chain's provider does not wait: it throws a NoCapacityError at once, and the asking chain decides.
   */
  waitForTokens?: boolean;
  /** The request's scope (default: a new one, for a request of its own). */
  scope?: RequestScope;
  /** Where an earlier call of the same request left this chain (default: nothing asked yet). */
  progress?: ChainProgress;
}

/**
 * The provider could not make its call: it needed what another chain could not give (coordinates, when no
 * geocoder could give them). Its chain skips it without blaming it; `reason` is the other chain's error,
 * the same object for every provider of the request that needed it, so it counts once.
 */
export class UnmetNeedError extends AppError {
  constructor(readonly reason: AppError) {
    super(reason.code, reason.message, reason.details, reason);
  }
}

/** Every provider left lacks only a token; one has capacity again in `waitMs`. An upstream_failed AppError. */
export class NoCapacityError extends AppError {
  constructor(
    readonly waitMs: number,
    message: string,
    details: ErrorDetails,
    cause?: unknown,
  ) {
    super('upstream_failed', message, details, cause);
  }
}

export interface ChainOptions {
  /** Total time for one request across providers, retries included (default 15 s). */
  budgetMs?: number;
  /** Time kept for each later provider of the chain when a provider is called (default 3 s): the budget rule. */
  reserveMs?: number;
  now?: () => number;
  /** Waits `ms` (default: a timer); tests inject one that moves their clock instead. */
  sleep?: (ms: number) => Promise<void>;
  breaker?: { threshold?: number; pauseMs?: number };
  /** Whether a valid result holds nothing (news or search without hits); default: never. */
  isEmpty?: (result: LiveResult) => boolean;
  /** Told of every upstream call's outcome and duration (for metrics). */
  onCall?: (call: ProviderCall) => void;
}

/** How many recent failures of each provider the chain keeps for the operator. */
const FAILURES_KEPT = 5;

/** The time kept for each later provider of a chain (the budget rule). */
export const DEFAULT_RESERVE_MS = 3_000;

const timer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Guarded<Q> {
  provider: Provider<Q>;
  breaker: CircuitBreaker;
  bucket: TokenBucket;
  /** Its latest failures, newest first, at most FAILURES_KEPT (for the operator). */
  recentFailures: { at: string; message: string }[];
}

export class ProviderChain<Q = string> {
  private readonly guarded: Guarded<Q>[];
  private readonly budgetMs: number;
  private readonly reserveMs: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly isEmpty: (result: LiveResult) => boolean;
  private readonly onCall: (call: ProviderCall) => void;

  constructor(
    readonly label: string,
    providers: Provider<Q>[],
    options: ChainOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.budgetMs = options.budgetMs ?? 15_000;
    this.reserveMs = options.reserveMs ?? DEFAULT_RESERVE_MS;
    this.sleep = options.sleep ?? timer;
    this.isEmpty = options.isEmpty ?? (() => false);
    this.onCall = options.onCall ?? (() => undefined);
    this.guarded = providers.map((provider) => ({
      provider,
      breaker: new CircuitBreaker({ ...options.breaker, now: this.now }),
      bucket: new TokenBucket(provider.perMinute, provider.burst, this.now),
      recentFailures: [],
    }));
  }

  get providerIds(): string[] {
    return this.guarded.map((g) => g.provider.id);
  }

  /** The breaker state of each provider, for tests and diagnostics. */
  breakerStates(): Record<string, string> {
    return Object.fromEntries(this.guarded.map((g) => [g.provider.id, g.breaker.state]));
  }

  /** Each provider's breaker, recent failures and token bucket, for the operator. */
  status(): ProviderStatus[] {
    return this.guarded.map((g) => ({
      chain: this.label,
      id: g.provider.id,
      breaker: g.breaker.state,
      recentFailures: [...g.recentFailures],
      tokens: g.bucket.level(),
    }));
  }

  async fetch(query: Q, options: FetchOptions = {}): Promise<LiveResult> {
    const deadline = Math.min(options.deadline ?? Number.POSITIVE_INFINITY, this.now() + this.budgetMs);
    const scope = options.scope ?? new RequestScope();
    const progress = options.progress ?? new ChainProgress();
    const { done, asked, failures } = progress;
    for (;;) {
      /** The shortest wait for a token among providers skipped only for lack of one. */
      let tokenWait: number | undefined;
      for (const [index, guarded] of this.guarded.entries()) {
        const { provider, breaker, bucket } = guarded;
        if (this.now() >= deadline) break;
        if (done.has(provider.id) || !breaker.allow()) continue;
        if (!bucket.tryTake()) {
          breaker.cancel(); // no call was made: a half-open trial stays available
          tokenWait = Math.min(tokenWait ?? Number.POSITIVE_INFINITY, bucket.msUntilToken());
          continue;
        }
        done.add(provider.id);
        const started = this.now();
        const reportCall = (outcome: ProviderCall['outcome']) =>
          this.onCall({
            chain: this.label,
            provider: provider.id,
            outcome,
            seconds: (this.now() - started) / 1000,
          });
        try {
          const result = await provider.fetch(query, this.shareOf(index, deadline, done), scope);
          asked.push(provider.id);
          breaker.success();
          reportCall(this.isEmpty(result) ? 'empty' : 'ok');
          if (this.isEmpty(result)) {
            progress.empty ??= result; // another provider may have what this one lacks
            continue;
          }
          return this.answer(result, asked);
        } catch (err) {
          if (err instanceof NoCapacityError) {
            // Its call waited on another chain's token, not on this provider: try it again after the wait.
            done.delete(provider.id);
            bucket.refund();
            breaker.cancel();
            tokenWait = Math.min(tokenWait ?? Number.POSITIVE_INFINITY, err.waitMs);
            continue;
          }
          if (err instanceof UnmetNeedError) {
            // It made no call of its own: skipped, not blamed; the other chain's failure counts once.
            asked.push(provider.id);
            bucket.refund();
            breaker.cancel();
            if (err.reason.code === 'not_found') progress.notFound ??= err.reason;
            else if (!failures.includes(err.reason)) failures.push(err.reason);
            continue;
          }
          asked.push(provider.id);
          const error = err instanceof AppError ? err : new AppError('upstream_failed', String(err), {}, err);
          if (error.code === 'not_found') {
            reportCall('not_found');
            breaker.success(); // the upstream works; it just does not know this query
            progress.notFound ??= error;
            continue;
          }
          const retryAfter = error.details.retry_after_s;
          breaker.failure(typeof retryAfter === 'number' ? retryAfter : undefined);
          reportCall(error.code === 'upstream_timeout' ? 'timeout' : 'failed');
          guarded.recentFailures.unshift({ at: new Date(this.now()).toISOString(), message: error.message });
          guarded.recentFailures.length = Math.min(guarded.recentFailures.length, FAILURES_KEPT);
          failures.push(error);
        }
      }
      if (tokenWait === undefined) break;
      if (options.waitForTokens === false || tokenWait > deadline - this.now()) {
        throw this.noCapacity(tokenWait, failures);
      }
      await this.sleep(Math.max(1, tokenWait));
    }
    if (progress.empty) return this.answer(progress.empty, asked);
    if (progress.notFound) throw progress.notFound;
    throw this.exhausted(failures);
  }

  /**
   * The deadline of the provider at `index` (the budget rule): the request's deadline less `reserveMs` for
   * each later provider that may still be asked in this request, but at least an equal share of what is left.
   */
  private shareOf(index: number, deadline: number, done: ReadonlySet<string>): number {
    const later = this.guarded
      .slice(index + 1)
      .filter((g) => !done.has(g.provider.id) && g.breaker.state !== 'open').length;
    const now = this.now();
    return Math.max(deadline - this.reserveMs * later, now + (deadline - now) / (later + 1));
  }

  /** The result, naming the providers asked when there was more than one (else `source` says it). */
  private answer(result: LiveResult, asked: string[]): LiveResult {
    return asked.length > 1 ? { ...result, providersAsked: [...asked] } : result;
  }

  /** A provider lacks only a token, and the wait for it does not fit this request's budget. */
  private noCapacity(waitMs: number, failures: AppError[]): NoCapacityError {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return new NoCapacityError(
      waitMs,
      `Every ${this.label} upstream is busy or failing, and the next has capacity again in ${seconds} s, ` +
        `longer than this request can wait; nothing was charged, try again in ${seconds} s.`,
      { source: this.providerIds.join(','), retry_after_s: seconds },
      failures.length > 0 ? new AggregateError(failures) : undefined,
    );
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
