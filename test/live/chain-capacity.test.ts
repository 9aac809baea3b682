/**
 * Issue 14: the chain waits for a token instead of failing when a token is all that is missing, says how
 * long until there is capacity when the wait does not fit the budget, and fails over on empty results.
 * The chain's clock and sleep are injected: waiting moves the clock, nothing really sleeps.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { LiveResult } from '../../src/core/live-port.js';
import { type Provider, ProviderChain } from '../../src/live/provider-chain.js';
import { TokenBucket } from '../../src/live/token-bucket.js';

class Clock {
  ms = 1_000_000;
  slept: number[] = [];
  now = () => this.ms;
  sleep = async (ms: number) => {
    this.slept.push(ms);
    this.ms += ms;
  };
}

function failing(id: string, calls: string[]): Provider {
  return {
    id,
    perMinute: 300,
    fetch: async () => {
      calls.push(id);
      throw new AppError('upstream_failed', `${id} answered 500`, { source: id });
    },
  };
}

function answering(id: string, perMinute: number, calls: string[], items?: unknown[]): Provider {
  return {
    id,
    perMinute,
    fetch: async (query) => {
      calls.push(id);
      return { source: id, data: items ? { items } : { city: query } };
    },
  };
}

const noItems = (result: LiveResult) => Array.isArray(result.data.items) && result.data.items.length === 0;

describe('token bucket', () => {
  it('says how long until its next token, without taking one', () => {
    const clock = new Clock();
    const bucket = new TokenBucket(20, 4, clock.now); // 3 s per token
    expect(bucket.msUntilToken()).toBe(0);
    for (let i = 0; i < 4; i++) expect(bucket.tryTake()).toBe(true);
    expect(bucket.msUntilToken()).toBe(3000);
    clock.ms += 1000;
    expect(bucket.msUntilToken()).toBe(2000);
    clock.ms += 2000;
    expect(bucket.msUntilToken()).toBe(0);
    expect(bucket.tryTake()).toBe(true);
  });
});

describe('provider chain: waiting for capacity', () => {
  it('five cities with the first provider down: the fifth waits for the second provider’s token', async () => {
    const clock = new Clock();
    const calls: string[] = [];
    // wttr.in's rate: 20 a minute, a burst of 4.
    const chain = new ProviderChain('weather', [failing('open-meteo', calls), answering('wttr', 20, calls)], {
      now: clock.now,
      sleep: clock.sleep,
    });
    const cities = ['paris', 'berlin', 'lyon', 'rome', 'madrid'];
    const sources: string[] = [];
    for (const city of cities) {
      const result = await chain.fetch(city);
      expect(result.data).toEqual({ city });
      sources.push(result.source);
      clock.ms += 200; // within a few seconds
    }
    expect(sources).toEqual(Array(5).fill('wttr'));
    // The fifth waited for wttr's next token (3 s after the burst began, 800 ms of it already gone).
    expect(clock.slept).toEqual([2200]);
    expect(calls.filter((c) => c === 'wttr')).toHaveLength(5);
  });

  it('a wait that does not fit the budget fails with retry_after_s, saying when there is capacity', async () => {
    const clock = new Clock();
    const calls: string[] = [];
    const chain = new ProviderChain('weather', [failing('open-meteo', calls), answering('wttr', 6, calls)], {
      now: clock.now,
      sleep: clock.sleep,
      budgetMs: 5_000,
    });
    expect((await chain.fetch('paris')).source).toBe('wttr'); // burst of 1 at 6 a minute: 10 s per token
    clock.ms += 1_500;
    const err = await chain.fetch('berlin').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'upstream_failed', details: { retry_after_s: 9 } });
    expect((err as AppError).message).toMatch(/capacity again in 9 s/);
    expect(clock.slept).toEqual([]);
  });

  it('waits the shortest time among the providers that lack only a token', async () => {
    const clock = new Clock();
    const calls: string[] = [];
    const chain = new ProviderChain('news', [answering('slow', 6, calls), answering('quick', 30, calls)], {
      now: clock.now,
      sleep: clock.sleep,
    });
    await chain.fetch('a'); // slow's only token
    for (let i = 0; i < 5; i++) await chain.fetch('b'); // quick's burst of 5
    calls.length = 0;
    const result = await chain.fetch('c');
    expect(result.source).toBe('quick');
    expect(clock.slept).toEqual([2000]); // quick: 2 s per token; slow: 10 s
  });
});

describe('provider chain: coverage fail-over', () => {
  const stories = [{ title: 'GraphQL federation', url: 'https://example.test/gql' }];

  it('an empty result moves on to the next provider, and the answer names the providers asked', async () => {
    const calls: string[] = [];
    const chain = new ProviderChain(
      'news',
      [answering('hn-algolia', 100, calls, []), answering('google-news', 100, calls, stories)],
      { isEmpty: noItems },
    );
    const result = await chain.fetch('graphql');
    expect(result.source).toBe('google-news');
    expect(result.data.items).toEqual(stories);
    expect(result.providersAsked).toEqual(['hn-algolia', 'google-news']);
  });

  it('answers empty only when every provider is empty, naming them all', async () => {
    const calls: string[] = [];
    const chain = new ProviderChain(
      'news',
      [
        answering('hn-algolia', 100, calls, []),
        answering('google-news', 100, calls, []),
        answering('gdelt', 100, calls, []),
      ],
      { isEmpty: noItems },
    );
    const result = await chain.fetch('qwzx');
    expect(result.data.items).toEqual([]);
    expect(result.source).toBe('hn-algolia');
    expect(result.providersAsked).toEqual(['hn-algolia', 'google-news', 'gdelt']);
  });
});
