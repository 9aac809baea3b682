/**
 * The JSON file store's background purge of expired memories: it deletes what expired by the service's
 * clock (durably: gone after a reopen too), nothing live, in batches, and runs on its interval once started.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Account, Memory } from '../../src/core/model.js';
import { ExpiryPurger, PURGE_BATCH } from '../../src/store/json/expiry-purger.js';
import { openJsonFileStore } from '../../src/store/json/json-file-store.js';

const holder = { pid: process.pid, command: 'test', startedAt: new Date().toISOString() };
const T0 = '2026-11-23T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(T0) + seconds * 1000).toISOString();

const account: Account = {
  id: 'a',
  email: 'a@example.com',
  name: null,
  plan: 'pay-as-you-go',
  keyHash: 'h',
  balanceCents: 0,
  createdAt: T0,
};
const memory = (key: string, expiresInS?: number): Memory => ({
  agentId: 'a',
  key,
  value: 'v',
  type: 'fact',
  metadata: {},
  createdAt: T0,
  updatedAt: T0,
  version: 1,
  ...(expiresInS === undefined ? {} : { expiresAt: at(expiresInS), ttlSeconds: expiresInS }),
});

describe('the expired-memory purge (JSON file store)', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  async function opened(memories: Memory[]) {
    const dir = await mkdtemp(path.join(tmpdir(), 'ac-purge-'));
    dirs.push(dir);
    const { store } = await openJsonFileStore(dir, holder);
    await store.transact(async (tx) => {
      await tx.putAccount(account);
      for (const m of memories) await tx.putMemory(m);
    });
    return { dir, store };
  }

  it('deletes what expired by the given clock, keeps the rest, durably', async () => {
    const { dir, store } = await opened([memory('never'), memory('early', 10), memory('late', 100)]);
    const purger = new ExpiryPurger(store, {
      intervalMs: 60_000,
      historyRetentionSeconds: 3600,
      now: () => new Date(at(10)),
    });
    expect(await purger.runOnce()).toEqual({
      ran: true,
      removed: { 'expired memories': 1, 'retired histories': 0, 'old usage counts': 0 },
    });
    expect(await purger.runOnce()).toEqual({
      ran: true,
      removed: { 'expired memories': 0, 'retired histories': 0, 'old usage counts': 0 },
    });
    const keys = async (s: typeof store) =>
      (await s.read((r) => r.listMemories('a', { limit: 10 }))).map((m) => m.key).sort();
    expect(await keys(store)).toEqual(['late', 'never']);
    await store.close();
    const { store: reopened } = await openJsonFileStore(dir, holder);
    expect(await keys(reopened)).toEqual(['late', 'never']);
    await reopened.close();
  });

  it('drops the histories past their retention: no live memory, newest entry older than the retention', async () => {
    const { store } = await opened([memory('live')]);
    const entry = (key: string, version: number, seconds: number, deleted = false) => ({
      agentId: 'a',
      key,
      version,
      at: at(seconds),
      ...(deleted ? { deleted: true as const } : { value: 'v', type: 'fact' as const, metadata: {} }),
    });
    await store.transact(async (tx) => {
      await tx.putMemoryVersion(entry('live', 1, 0), 10); // its memory is live: kept however old
      await tx.putMemoryVersion(entry('gone', 1, 0), 10);
      await tx.putMemoryVersion(entry('gone', 2, 100, true), 10); // deleted at 100 s
      await tx.putMemoryVersion(entry('recent', 1, 0), 10);
      await tx.putMemoryVersion(entry('recent', 2, 3_000, true), 10); // deleted at 3,000 s
    });
    // At 3,701 s with a retention of an hour: 'gone' (last written at 100 s) is just past it, 'recent' is not.
    const purger = new ExpiryPurger(store, {
      intervalMs: 60_000,
      historyRetentionSeconds: 3600,
      now: () => new Date(at(3_701)),
    });
    expect(await purger.runOnce()).toEqual({
      ran: true,
      removed: { 'expired memories': 0, 'retired histories': 1, 'old usage counts': 0 },
    });
    const versions = (key: string) => store.read((r) => r.listMemoryVersions('a', key, 10));
    expect(await versions('gone')).toEqual([]);
    expect((await versions('recent')).map((v) => v.version)).toEqual([2, 1]);
    expect((await versions('live')).map((v) => v.version)).toEqual([1]);
    await store.close();
  });

  it('drops live-data answer counts older than the usage endpoint shows (90 days), durably', async () => {
    const { dir, store } = await opened([]);
    await store.transact((tx) =>
      tx.addLiveUsage(
        ['2026-08-25', '2026-08-26', '2026-11-23'].map((day) => ({
          agentId: 'a',
          day,
          state: 'hit',
          count: 3,
        })),
      ),
    );
    // On 2026-11-23 the 90 days kept begin on 2026-08-26.
    const purger = new ExpiryPurger(store, {
      intervalMs: 60_000,
      historyRetentionSeconds: 3600,
      now: () => new Date('2026-11-23T23:59:00Z'),
    });
    expect(await purger.runOnce()).toEqual({
      ran: true,
      removed: { 'expired memories': 0, 'retired histories': 0, 'old usage counts': 1 },
    });
    expect((await store.liveUsage('a', '2026-01-01')).map((c) => c.day).sort()).toEqual([
      '2026-08-26',
      '2026-11-23',
    ]);
    expect(await purger.runOnce()).toEqual({
      ran: true,
      removed: { 'expired memories': 0, 'retired histories': 0, 'old usage counts': 0 },
    });
    await store.close();
    const { store: reopened } = await openJsonFileStore(dir, holder);
    expect((await reopened.liveUsage('a', '2026-01-01')).map((c) => c.day).sort()).toEqual([
      '2026-08-26',
      '2026-11-23',
    ]);
    await reopened.close();
  });

  it('goes on batch after batch until nothing expired is left', async () => {
    const many = Array.from({ length: PURGE_BATCH * 2 + 3 }, (_, i) => memory(`m${i}`, 1));
    const { store } = await opened([...many, memory('live', 1_000)]);
    const purger = new ExpiryPurger(store, {
      intervalMs: 60_000,
      historyRetentionSeconds: 3600,
      now: () => new Date(at(5)),
    });
    expect(await purger.runOnce()).toEqual({
      ran: true,
      removed: { 'expired memories': PURGE_BATCH * 2 + 3, 'retired histories': 0, 'old usage counts': 0 },
    });
    expect(await store.read((r) => r.countMemories('a'))).toBe(1);
    await store.close();
  });

  it('runs on its interval once started, and stops', async () => {
    const { store } = await opened([memory('gone', 1)]);
    const rounds: unknown[] = [];
    const purger = new ExpiryPurger(store, {
      intervalMs: 20,
      historyRetentionSeconds: 3600,
      now: () => new Date(at(5)),
      onRound: (outcome) => rounds.push(outcome),
    });
    purger.start();
    while (rounds.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    await purger.stop();
    expect(rounds[0]).toEqual({
      ran: true,
      removed: { 'expired memories': 1, 'retired histories': 0, 'old usage counts': 0 },
    });
    expect(await store.read((r) => r.countMemories('a'))).toBe(0);
    await store.close();
  });
});
