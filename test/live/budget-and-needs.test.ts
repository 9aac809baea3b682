/**
 * Issue 33, the chain's side: the budget rule (each provider's deadline keeps a share for the providers
 * after it), providers skipped for an unmet need (a weather provider without coordinates) without blame,
 * their common failure counted once, and a request scope whose memos its providers share. The chain's clock
 * is injected; nothing really waits.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import {
  DEFAULT_RESERVE_MS,
  type Provider,
  ProviderChain,
  RequestScope,
  UnmetNeedError,
} from '../../src/live/provider-chain.js';

class Clock {
  ms = 1_000_000;
  now = () => this.ms;
}

/** A provider that records the deadline it was given, spends `spendMs` of the clock, then fails. */
function recording(id: string, clock: Clock, deadlines: Record<string, number>, spendMs = 0): Provider {
  return {
    id,
    perMinute: 600,
    fetch: async (_query, deadline) => {
      deadlines[id] = deadline - clock.ms;
      clock.ms += spendMs;
      throw new AppError('upstream_failed', `${id} failed`, { source: id });
    },
  };
}

function answering(id: string, calls: string[]): Provider {
  return {
    id,
    perMinute: 600,
    fetch: async (query) => {
      calls.push(id);
      return { source: id, data: { query } };
    },
  };
}

/** A provider that needs what `need()` gives (coordinates, say) before its own call. */
function needing(id: string, need: () => Promise<unknown>, calls: string[]): Provider {
  return {
    id,
    perMinute: 600,
    fetch: async (query) => {
      await need();
      calls.push(id);
      return { source: id, data: { query } };
    },
  };
}

describe('the budget rule', () => {
  it('gives each provider the deadline less 3 s for each later provider', async () => {
    expect(DEFAULT_RESERVE_MS).toBe(3_000);
    const clock = new Clock();
    const deadlines: Record<string, number> = {};
    const chain = new ProviderChain(
      'weather',
      ['a', 'b', 'c'].map((id) => recording(id, clock, deadlines)),
      { now: clock.now, budgetMs: 15_000 },
    );
    await chain.fetch('oslo').catch(() => undefined);
    expect(deadlines).toEqual({ a: 9_000, b: 12_000, c: 15_000 });
  });

  it('a provider that hangs to its deadline leaves the later ones their share', async () => {
    const clock = new Clock();
    const deadlines: Record<string, number> = {};
    const hanging: Provider = {
      id: 'hangs',
      perMinute: 600,
      fetch: async (_query, deadline) => {
        deadlines.hangs = deadline - clock.ms;
        clock.ms = deadline; // it used all it was given
        throw new AppError('upstream_timeout', 'hangs timed out', { source: 'hangs' });
      },
    };
    const calls: string[] = [];
    const chain = new ProviderChain(
      'weather',
      [hanging, recording('b', clock, deadlines), answering('c', calls)],
      {
        now: clock.now,
        budgetMs: 15_000,
      },
    );
    expect((await chain.fetch('oslo')).source).toBe('c');
    expect(deadlines).toEqual({ hangs: 9_000, b: 3_000 });
  });

  it('counts no reserve for a later provider whose breaker is open', async () => {
    const clock = new Clock();
    const deadlines: Record<string, number> = {};
    const limited: Provider = {
      id: 'b',
      perMinute: 600,
      fetch: async (_query, deadline) => {
        deadlines.b = deadline - clock.ms;
        throw new AppError('upstream_failed', 'b 429', { source: 'b', retry_after_s: 600 });
      },
    };
    const chain = new ProviderChain(
      'weather',
      [recording('a', clock, deadlines), limited, recording('c', clock, deadlines)],
      { now: clock.now, budgetMs: 15_000, breaker: { threshold: 1 } },
    );
    await chain.fetch('oslo').catch(() => undefined);
    expect(deadlines).toEqual({ a: 9_000, b: 12_000, c: 15_000 });
    clock.ms += 60_000; // a and c may be tried again; b is paused for its Retry-After
    expect(chain.breakerStates()).toEqual({ a: 'half-open', b: 'open', c: 'half-open' });
    await chain.fetch('oslo').catch(() => undefined);
    expect(deadlines).toEqual({ a: 12_000, b: 12_000, c: 15_000 });
  });

  it('never gives less than an equal share of what is left', async () => {
    const clock = new Clock();
    const deadlines: Record<string, number> = {};
    const chain = new ProviderChain(
      'weather',
      ['a', 'b', 'c'].map((id) => recording(id, clock, deadlines)),
      { now: clock.now, budgetMs: 4_000 },
    );
    await chain.fetch('oslo').catch(() => undefined);
    // a: 4 s − 6 s is less than a third of 4 s; b: 4 s − 3 s = 1 s is less than half of the 4 s left.
    expect(deadlines.a).toBeCloseTo(4_000 / 3);
    expect(deadlines.b).toBe(2_000);
    expect(deadlines.c).toBe(4_000);
  });
});

describe('providers skipped for an unmet need', () => {
  const noPlace = () =>
    new AppError('upstream_failed', 'Every geocoding upstream failed.', { source: 'geo' });

  it('are skipped without blame and without spending a token; the need’s failure counts once', async () => {
    const clock = new Clock();
    const calls: string[] = [];
    let reason = noPlace();
    const unmet = () => Promise.reject(new UnmetNeedError(reason));
    const chain = new ProviderChain(
      'weather',
      [needing('open-meteo', unmet, calls), needing('met-norway', unmet, calls), answering('wttr', calls)],
      { now: clock.now, breaker: { threshold: 2 } },
    );
    for (let i = 0; i < 5; i++) {
      reason = noPlace();
      const result = await chain.fetch(`city ${i}`);
      expect(result.source).toBe('wttr');
      expect(result.providersAsked).toEqual(['open-meteo', 'met-norway', 'wttr']);
    }
    expect(calls).toEqual(Array(5).fill('wttr'));
    expect(chain.breakerStates()).toEqual({ 'open-meteo': 'closed', 'met-norway': 'closed', wttr: 'closed' });
    const tokens = chain.status().map((s) => s.tokens.available);
    expect(tokens[0]).toBe(100); // refunded: full
    expect(tokens[2]).toBe(95);
  });

  it('when nothing else answers, the answer is the need’s failure, once', async () => {
    const clock = new Clock();
    const reason = noPlace();
    const unmet = () => Promise.reject(new UnmetNeedError(reason));
    const chain = new ProviderChain('weather', [needing('a', unmet, []), needing('b', unmet, [])], {
      now: clock.now,
    });
    expect(await chain.fetch('oslo').catch((e) => e)).toBe(reason);
    const failing: Provider = {
      id: 'c',
      perMinute: 600,
      fetch: async () => {
        throw new AppError('upstream_failed', 'c failed', { source: 'c' });
      },
    };
    const three = new ProviderChain('weather', [needing('a', unmet, []), needing('b', unmet, []), failing], {
      now: clock.now,
    });
    const err = await three.fetch('oslo').catch((e) => e);
    expect(err.message).toBe('Every weather upstream failed (geo, c); nothing was charged, try again later.');
  });

  it('a need that is not_found makes the answer not_found when no other provider answers', async () => {
    const clock = new Clock();
    const nowhere = new AppError('not_found', 'No place called "atlantis" was found.', { source: 'geo' });
    const unmet = () => Promise.reject(new UnmetNeedError(nowhere));
    const failing: Provider = {
      id: 'wttr',
      perMinute: 600,
      fetch: async () => {
        throw new AppError('upstream_failed', 'wttr failed', { source: 'wttr' });
      },
    };
    const chain = new ProviderChain('weather', [needing('a', unmet, []), failing], { now: clock.now });
    expect(await chain.fetch('atlantis').catch((e) => e)).toBe(nowhere);
  });
});

describe('the request scope', () => {
  it('lets the providers of one request share a memo, and no other request', async () => {
    const clock = new Clock();
    let made = 0;
    const shared = (scope: RequestScope) => scope.memo('place', () => ++made);
    const seen: number[] = [];
    const reading = (id: string, fail: boolean): Provider => ({
      id,
      perMinute: 600,
      fetch: async (query, _deadline, scope) => {
        seen.push(shared(scope));
        if (fail) throw new AppError('upstream_failed', `${id} failed`, { source: id });
        return { source: id, data: { query } };
      },
    });
    const chain = new ProviderChain('weather', [reading('a', true), reading('b', false)], { now: clock.now });
    await chain.fetch('oslo');
    await chain.fetch('oslo');
    expect(seen).toEqual([1, 1, 2, 2]);
    const scope = new RequestScope();
    await chain.fetch('oslo', { scope });
    expect(scope.memo('place', () => -1)).toBe(3);
  });
});
