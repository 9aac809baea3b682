/**
 * The write-behind count of live-data answers (src/core/usage.ts): counts reach the store at a flush, a
 * flush that fails keeps them for the next one (and reports, never throws), and nothing is counted after
 * close. Over the in-memory store, with a manual clock; the timer is never waited for.
 */
import { describe, expect, it } from 'vitest';
import type { StorePort } from '../../src/core/store-port.js';
import { LiveUsageTally } from '../../src/core/usage.js';
import { createMemoryStore } from '../../src/store/json/json-store.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** The in-memory store, whose next `failures` transactions fail. */
function flakyStore(failures: number): StorePort & { failing: number } {
  const store = createMemoryStore();
  const flaky = Object.create(store) as StorePort & { failing: number };
  flaky.failing = failures;
  flaky.transact = (work) => {
    if (flaky.failing > 0) {
      flaky.failing--;
      return Promise.reject(new Error('the disk is full'));
    }
    return store.transact(work);
  };
  return flaky;
}

async function withAccount(store: StorePort, id: string) {
  await store.transact((tx) =>
    tx.putAccount({
      id,
      email: `${id}@example.com`,
      name: null,
      plan: 'pay-as-you-go',
      keyHash: `h-${id}`,
      balanceCents: 0,
      createdAt: '2026-11-21T00:00:00.000Z',
    }),
  );
}

describe('the live-data usage tally', () => {
  it('adds the counts at a flush, per agent, day and state', async () => {
    const store = flakyStore(0);
    await withAccount(store, 'a');
    const clock = new ManualClock(Date.parse('2026-11-21T23:59:00.000Z'));
    const tally = new LiveUsageTally(store, clock, (err) => {
      throw err;
    });
    tally.count('a', 'fresh');
    tally.count('a', 'hit');
    tally.count('a', 'hit');
    clock.advance(120_000); // the next UTC day
    tally.count('a', 'hit');
    expect(await store.liveUsage('a', '2026-11-01')).toEqual([]);
    await tally.flush();
    const rows = await store.liveUsage('a', '2026-11-01');
    expect(rows.sort((x, y) => `${x.day}${x.state}`.localeCompare(`${y.day}${y.state}`))).toEqual([
      { agentId: 'a', day: '2026-11-21', state: 'fresh', count: 1 },
      { agentId: 'a', day: '2026-11-21', state: 'hit', count: 2 },
      { agentId: 'a', day: '2026-11-22', state: 'hit', count: 1 },
    ]);
    await tally.close();
  });

  it('keeps the counts of a flush that failed for the next one, and reports the failure', async () => {
    const store = flakyStore(0);
    await withAccount(store, 'a');
    store.failing = 1;
    const errors: unknown[] = [];
    const tally = new LiveUsageTally(store, new ManualClock(), (err) => errors.push(err));
    tally.count('a', 'hit');
    await expect(tally.flush()).resolves.toBeUndefined();
    expect(errors.map((e) => (e as Error).message)).toEqual(['the disk is full']);
    tally.count('a', 'hit');
    await tally.flush();
    expect(await store.liveUsage('a', '2026-01-01')).toEqual([
      { agentId: 'a', day: '2026-11-21', state: 'hit', count: 2 },
    ]);
    await tally.close();
  });

  it('adds what is pending at close, and counts nothing after it', async () => {
    const store = flakyStore(0);
    await withAccount(store, 'a');
    const tally = new LiveUsageTally(store, new ManualClock(), (err) => {
      throw err;
    });
    tally.count('a', 'stale');
    await tally.close();
    tally.count('a', 'stale');
    await tally.flush();
    expect(await store.liveUsage('a', '2026-01-01')).toEqual([
      { agentId: 'a', day: '2026-11-21', state: 'stale', count: 1 },
    ]);
  });
});
