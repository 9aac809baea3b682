/** Fail-over order, breakers opening and closing, token buckets, and the chain's final error. */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { CircuitBreaker } from '../../src/live/circuit-breaker.js';
import { type Provider, ProviderChain } from '../../src/live/provider-chain.js';
import { TokenBucket } from '../../src/live/token-bucket.js';

class Clock {
  ms = 1_000_000;
  now = () => this.ms;
}

type Behaviour = 'ok' | 'fail' | 'timeout' | 'not_found' | { retryAfter: number };

function provider(id: string, script: Behaviour[], calls: string[], perMinute = 1000): Provider {
  let i = 0;
  return {
    id,
    perMinute,
    fetch: async (query) => {
      calls.push(id);
      const step = script[Math.min(i++, script.length - 1)] as Behaviour;
      if (step === 'ok') return { data: { from: id, query }, source: id };
      if (step === 'not_found') throw new AppError('not_found', `${id}: no such thing`, { source: id });
      if (step === 'timeout') throw new AppError('upstream_timeout', `${id} timed out`, { source: id });
      if (step === 'fail') throw new AppError('upstream_failed', `${id} failed`, { source: id });
      throw new AppError('upstream_failed', `${id} 429`, { source: id, retry_after_s: step.retryAfter });
    },
  };
}

describe('provider chain', () => {
  it("reports each provider's breaker, last failures, bucket and every call's outcome", async () => {
    const clock = new Clock();
    const calls: string[] = [];
    const heard: unknown[] = [];
    const chain = new ProviderChain(
      'news',
      [provider('a', ['fail', 'timeout', 'ok'], calls, 60), provider('b', ['ok'], calls, 60)],
      { now: clock.now, breaker: { threshold: 2 }, onCall: (call) => heard.push(call) },
    );
    expect(chain.status()).toEqual([
      {
        chain: 'news',
        id: 'a',
        breaker: 'closed',
        recentFailures: [],
        tokens: { available: 10, capacity: 10 },
      },
      {
        chain: 'news',
        id: 'b',
        breaker: 'closed',
        recentFailures: [],
        tokens: { available: 10, capacity: 10 },
      },
    ]);
    await chain.fetch('x');
    clock.ms += 1000;
    await chain.fetch('y');
    const [a, b] = chain.status();
    expect(a?.breaker).toBe('open');
    expect(a?.recentFailures.map((f) => f.message)).toEqual(['a timed out', 'a failed']);
    expect(a?.recentFailures[0]?.at).toBe(new Date(clock.ms).toISOString());
    expect(a?.tokens.available).toBeCloseTo(9, 5); // two taken, one back after a second at 60 a minute
    expect(b).toMatchObject({ breaker: 'closed', recentFailures: [] });
    expect(heard).toEqual([
      { chain: 'news', provider: 'a', outcome: 'failed', seconds: 0 },
      { chain: 'news', provider: 'b', outcome: 'ok', seconds: 0 },
      { chain: 'news', provider: 'a', outcome: 'timeout', seconds: 0 },
      { chain: 'news', provider: 'b', outcome: 'ok', seconds: 0 },
    ]);
  });

  it('answers from the first provider that works, in order', async () => {
    const calls: string[] = [];
    const chain = new ProviderChain('weather', [
      provider('a', ['fail'], calls),
      provider('b', ['ok'], calls),
      provider('c', ['ok'], calls),
    ]);
    const result = await chain.fetch('berlin');
    expect(result.source).toBe('b');
    expect(calls).toEqual(['a', 'b']);
  });

  it('keeps going past not_found, and answers not_found when nobody knows the query', async () => {
    const calls: string[] = [];
    const found = new ProviderChain('price', [
      provider('a', ['not_found'], calls),
      provider('b', ['ok'], calls),
    ]);
    expect((await found.fetch('x')).source).toBe('b');
    const nobody = new ProviderChain('price', [
      provider('a', ['not_found'], calls),
      provider('b', ['fail'], calls),
    ]);
    await expect(nobody.fetch('x')).rejects.toMatchObject({ code: 'not_found' });
  });

  it('fails with 504 when every upstream timed out, 502 otherwise, with the shortest Retry-After', async () => {
    const calls: string[] = [];
    const timeouts = new ProviderChain('news', [
      provider('a', ['timeout'], calls),
      provider('b', ['timeout'], calls),
    ]);
    await expect(timeouts.fetch('x')).rejects.toMatchObject({ code: 'upstream_timeout' });
    const mixed = new ProviderChain('news', [
      provider('a', [{ retryAfter: 30 }], calls),
      provider('b', [{ retryAfter: 7 }], calls),
    ]);
    const err = await mixed.fetch('x').catch((e) => e);
    expect(err).toMatchObject({ code: 'upstream_failed', details: { retry_after_s: 7 } });
    expect(err.message).toMatch(/Every news upstream failed \(a, b\)/);
  });

  it('opens a breaker after repeated failures, skips that provider, and half-opens after the pause', async () => {
    const clock = new Clock();
    const calls: string[] = [];
    const chain = new ProviderChain(
      'weather',
      [provider('flaky', ['fail', 'fail', 'fail', 'ok'], calls), provider('backup', ['ok'], calls)],
      {
        now: clock.now,
        breaker: { threshold: 3, pauseMs: 60_000 },
      },
    );
    for (let i = 0; i < 3; i++) expect((await chain.fetch('q')).source).toBe('backup');
    expect(chain.breakerStates()).toEqual({ flaky: 'open', backup: 'closed' });
    calls.length = 0;
    expect((await chain.fetch('q')).source).toBe('backup');
    expect(calls).toEqual(['backup']); // skipped while open
    clock.ms += 60_000;
    expect(chain.breakerStates().flaky).toBe('half-open');
    calls.length = 0;
    expect((await chain.fetch('q')).source).toBe('flaky'); // the trial call succeeds
    expect(calls).toEqual(['flaky']);
    expect(chain.breakerStates().flaky).toBe('closed');
  });

  it("opens at once for the upstream's Retry-After", async () => {
    const clock = new Clock();
    const calls: string[] = [];
    const chain = new ProviderChain(
      'price',
      [provider('limited', [{ retryAfter: 20 }, 'ok'], calls), provider('other', ['ok'], calls)],
      {
        now: clock.now,
      },
    );
    expect((await chain.fetch('btc')).source).toBe('other');
    expect(chain.breakerStates().limited).toBe('open');
    clock.ms += 19_000;
    expect((await chain.fetch('btc')).source).toBe('other');
    clock.ms += 1_000;
    expect((await chain.fetch('btc')).source).toBe('limited');
  });

  it('says when every provider is paused', async () => {
    const clock = new Clock();
    const chain = new ProviderChain('search', [provider('a', [{ retryAfter: 90 }], [])], { now: clock.now });
    await chain.fetch('x').catch(() => undefined);
    const err = await chain.fetch('x').catch((e) => e);
    expect(err).toMatchObject({ code: 'upstream_failed', details: { retry_after_s: 60 } });
    expect(err.message).toMatch(/paused/);
  });

  it('skips a provider whose token bucket is empty', async () => {
    const clock = new Clock();
    const calls: string[] = [];
    const chain = new ProviderChain(
      'news',
      [provider('slow-lane', ['ok'], calls, 6), provider('other', ['ok'], calls)],
      { now: clock.now },
    );
    expect((await chain.fetch('a')).source).toBe('slow-lane'); // burst of 1 at 6/min
    expect((await chain.fetch('b')).source).toBe('other');
    clock.ms += 10_000;
    expect((await chain.fetch('c')).source).toBe('slow-lane');
  });

  it('stops trying once the budget is spent', async () => {
    const clock = new Clock();
    const calls: string[] = [];
    const slow: Provider = {
      id: 'slow',
      perMinute: 100,
      fetch: async () => {
        calls.push('slow');
        clock.ms += 16_000;
        throw new AppError('upstream_timeout', 'slow timed out', { source: 'slow' });
      },
    };
    const chain = new ProviderChain('weather', [slow, provider('never', ['ok'], calls)], {
      now: clock.now,
      budgetMs: 15_000,
    });
    await expect(chain.fetch('x')).rejects.toMatchObject({ code: 'upstream_timeout' });
    expect(calls).toEqual(['slow']);
  });
});

describe('circuit breaker and token bucket', () => {
  it('lets one trial through when half-open and re-opens on its failure', () => {
    const clock = new Clock();
    const breaker = new CircuitBreaker({ threshold: 1, pauseMs: 1000, now: clock.now });
    breaker.failure();
    expect(breaker.allow()).toBe(false);
    clock.ms += 1000;
    expect(breaker.allow()).toBe(true);
    expect(breaker.allow()).toBe(false); // one trial at a time
    breaker.failure();
    expect(breaker.state).toBe('open');
  });

  it('a cancelled trial leaves the breaker half-open, not closed', () => {
    const clock = new Clock();
    const breaker = new CircuitBreaker({ threshold: 1, pauseMs: 1000, now: clock.now });
    breaker.failure();
    clock.ms += 1000;
    expect(breaker.allow()).toBe(true);
    breaker.cancel();
    expect(breaker.state).toBe('half-open');
    expect(breaker.allow()).toBe(true);
  });

  it('refills at the sustained rate up to the burst', () => {
    const clock = new Clock();
    const bucket = new TokenBucket(60, 2, clock.now);
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, false]);
    clock.ms += 1000;
    expect(bucket.tryTake()).toBe(true);
    clock.ms += 60_000;
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, false]);
  });
});
