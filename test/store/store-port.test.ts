/** One behaviour suite for the store port, run against every adapter. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Account, LedgerEntry, Memory, MemoryVersion } from '../../src/core/model.js';
import type { StorePort } from '../../src/core/store-port.js';
import type { MemoryQuery } from '../../src/core/store-reader.js';
import { openJsonFileStore } from '../../src/store/json/json-file-store.js';
import { createMemoryStore } from '../../src/store/json/json-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { testDatabase } from '../helpers/postgres.js';

const account = (id: string, balance = 50): Account => ({
  id,
  email: `${id}@example.com`,
  name: null,
  plan: 'pay-as-you-go',
  keyHash: `hash-${id}`,
  balanceCents: balance,
  createdAt: '2026-11-21T00:00:00.000Z',
});
const memory = (agentId: string, key: string, value = 'v', type: Memory['type'] = 'context'): Memory => ({
  agentId,
  key,
  value,
  type,
  metadata: {},
  createdAt: '2026-11-21T00:00:00.000Z',
  updatedAt: '2026-11-21T00:00:00.000Z',
  version: 1,
});
const entry = (agentId: string, n: number): LedgerEntry => ({
  id: `txn_${n}`,
  agentId,
  at: '2026-11-21T00:00:00.000Z',
  operation: 'memory_store',
  amountCents: -1,
  balanceAfterCents: 50 - n,
});

interface Adapter {
  name: string;
  /** When records past their retention are removed: at the next write, or by a background sweep. */
  retention: 'on-write' | 'sweep';
  open(): Promise<{ store: StorePort; reopen?: () => Promise<StorePort>; cleanup(): Promise<void> }>;
}

const adapters: Adapter[] = [
  {
    name: 'in-memory',
    retention: 'on-write',
    open: async () => ({ store: createMemoryStore(), cleanup: async () => {} }),
  },
  {
    name: 'JSON file',
    retention: 'on-write',
    open: async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'ac-store-'));
      const holder = { pid: process.pid, command: 'test', startedAt: new Date().toISOString() };
      let current = (await openJsonFileStore(dir, holder)).store;
      return {
        store: current,
        reopen: async () => {
          await current.close();
          current = (await openJsonFileStore(dir, holder)).store;
          return current;
        },
        cleanup: async () => {
          await current.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    retention: 'sweep',
    open: async () => {
      const { url } = await testDatabase({ label: 'store_port' });
      let current = new PostgresStore({ connectionString: url });
      return {
        store: current,
        reopen: async () => {
          await current.close();
          current = new PostgresStore({ connectionString: url });
          return current;
        },
        cleanup: () => current.close(),
      };
    },
  },
];

/** Accounts for agents that the test writes memories or ledger entries of (a database refuses orphans). */
function withAgents(store: StorePort, ...ids: string[]): Promise<void> {
  return store.transact(async (tx) => {
    for (const id of ids) await tx.putAccount(account(id));
  });
}

for (const adapter of adapters) {
  describe(`store port: ${adapter.name}`, () => {
    let cleanup: (() => Promise<void>) | undefined;
    afterEach(async () => {
      await cleanup?.();
      cleanup = undefined;
    });
    const open = async () => {
      const opened = await adapter.open();
      cleanup = opened.cleanup;
      return opened;
    };

    it('reports: ledger pages newest first, charges per UTC day and operation, credits left out', async () => {
      const { store, reopen } = await open();
      await withAgents(store, 'r', 'other');
      const at = (day: string, n: number, operation: LedgerEntry['operation'], cents: number) => ({
        ...entry('r', n),
        id: `txn_r${n}`,
        at: `2026-11-${day}T10:00:0${n % 10}.000Z`,
        operation,
        amountCents: operation === 'top_up' ? cents : -cents,
        costCents: operation === 'top_up' ? undefined : cents,
      });
      await store.transact(async (tx) => {
        await tx.appendLedger(at('20', 1, 'memory_store', 1));
        await tx.appendLedger(at('21', 2, 'top_up', 25));
        await tx.appendLedger(at('21', 3, 'data', 2));
        await tx.appendLedger(at('21', 4, 'memory_store', 1));
        await tx.appendLedger(at('21', 5, 'memory_store', 1));
        await tx.appendLedger({ ...entry('other', 9), id: 'txn_other', at: '2026-11-21T11:00:00.000Z' });
      });
      const check = async (s: StorePort) => {
        const first = await s.ledgerPage('r', { limit: 2 });
        expect(first.entries.map((e) => e.id)).toEqual(['txn_r5', 'txn_r4']);
        expect(first.next).toBeDefined();
        const second = await s.ledgerPage('r', { limit: 2, before: first.next as number });
        expect(second.entries.map((e) => e.id)).toEqual(['txn_r3', 'txn_r2']);
        const last = await s.ledgerPage('r', { limit: 2, before: second.next as number });
        expect(last.entries.map((e) => e.id)).toEqual(['txn_r1']);
        expect(last.next).toBeUndefined();
        // A page that ends exactly at the oldest entry says no more follow.
        const exact = await s.ledgerPage('r', { limit: 5 });
        expect(exact.entries).toHaveLength(5);
        expect(exact.next).toBeUndefined();
        const tail = await s.ledgerPage('r', {
          limit: 3,
          before: (await s.ledgerPage('r', { limit: 2 })).next,
        });
        expect(tail.entries.map((e) => e.id)).toEqual(['txn_r3', 'txn_r2', 'txn_r1']);
        expect(tail.next).toBeUndefined();
        expect((await s.ledgerPage('nobody', { limit: 5 })).entries).toEqual([]);
        const usage = await s.ledgerUsage('r', '2026-11-21T00:00:00.000Z');
        expect(usage.sort((a, b) => a.operation.localeCompare(b.operation))).toEqual([
          { day: '2026-11-21', operation: 'data', charges: 1, spentCents: 2 },
          { day: '2026-11-21', operation: 'memory_store', charges: 2, spentCents: 2 },
        ]);
        expect(await s.ledgerUsage('r', '2026-11-22T00:00:00.000Z')).toEqual([]);
      };
      await check(store);
      if (reopen) await check(await reopen());
    });

    it('reports: live-data answer counts add up per agent, day and state', async () => {
      const { store, reopen } = await open();
      await withAgents(store, 'u', 'v');
      await store.transact((tx) =>
        tx.addLiveUsage([
          { agentId: 'u', day: '2026-11-20', state: 'fresh', count: 2 },
          { agentId: 'u', day: '2026-11-21', state: 'hit', count: 3 },
          { agentId: 'v', day: '2026-11-21', state: 'hit', count: 1 },
        ]),
      );
      await store.transact((tx) =>
        tx.addLiveUsage([{ agentId: 'u', day: '2026-11-21', state: 'hit', count: 4 }]),
      );
      const check = async (s: StorePort) => {
        const sorted = (rows: Awaited<ReturnType<StorePort['liveUsage']>>) =>
          rows.sort((a, b) =>
            `${a.agentId}${a.day}${a.state}`.localeCompare(`${b.agentId}${b.day}${b.state}`),
          );
        expect(sorted(await s.liveUsage('u', '2026-11-01'))).toEqual([
          { agentId: 'u', day: '2026-11-20', state: 'fresh', count: 2 },
          { agentId: 'u', day: '2026-11-21', state: 'hit', count: 7 },
        ]);
        expect(await s.liveUsage('v', '2026-11-01')).toEqual([
          { agentId: 'v', day: '2026-11-21', state: 'hit', count: 1 },
        ]);
        const totals = await s.liveUsageTotals('2026-11-20');
        expect(totals.sort((a, b) => `${a.day}${a.state}`.localeCompare(`${b.day}${b.state}`))).toEqual([
          { day: '2026-11-20', state: 'fresh', count: 2 },
          { day: '2026-11-21', state: 'hit', count: 8 },
        ]);
        expect(await s.liveUsageTotals('2026-11-22')).toEqual([]);
      };
      await check(store);
      if (reopen) await check(await reopen());
    });

    it('reports: accounts in e-mail order, after a cursor, filtered, with the total', async () => {
      const { store } = await open();
      await withAgents(store, 'zed', 'amy', 'bo', 'amos');
      const page = await store.listAccounts({ limit: 2 });
      expect(page.accounts.map((a) => a.email)).toEqual(['amos@example.com', 'amy@example.com']);
      expect(page.total).toBe(4);
      const next = await store.listAccounts({ limit: 5, after: 'amy@example.com' });
      expect(next.accounts.map((a) => a.email)).toEqual(['bo@example.com', 'zed@example.com']);
      const filtered = await store.listAccounts({ limit: 1, emailContains: 'am' }); // 'exAMple' too
      expect(filtered.accounts.map((a) => a.id)).toEqual(['amos']);
      expect(filtered.total).toBe(4);
      expect(
        (await store.listAccounts({ limit: 5, emailContains: 'amo' })).accounts.map((a) => a.id),
      ).toEqual(['amos']);
      // A fragment is text, not a pattern.
      expect((await store.listAccounts({ limit: 5, emailContains: '%' })).total).toBe(0);
      // Byte order, as the JSON store compares code units: punctuation sorts by its code, whatever the
      // database's collation would say.
      await withAgents(store, 'a-b', 'a.b', 'a_b', 'ab', 'aB0');
      const order = await store.listAccounts({ limit: 10, emailContains: '@' });
      const ours = order.accounts.map((a) => a.id).filter((id) => /^a[-._bB]/u.test(id));
      expect(ours).toEqual(['a-b', 'a.b', 'aB0', 'a_b', 'ab']);
    });

    it('commits all writes of a transaction together and finds accounts by id, key hash and e-mail', async () => {
      const { store } = await open();
      await store.transact(async (tx) => {
        await tx.putAccount(account('a'));
        await tx.appendLedger(entry('a', 1));
        await tx.putMemory(memory('a', 'k'));
        expect(await tx.getMemory('a', 'k')).toBeDefined(); // reads its own writes
        expect(await tx.countMemories('a')).toBe(1);
        expect(await store.read((r) => r.getMemory('a', 'k'))).toBeUndefined(); // not visible outside yet
      });
      await store.read(async (r) => {
        expect((await r.getAccount('a'))?.email).toBe('a@example.com');
        expect((await r.findAccountByKeyHash('hash-a'))?.id).toBe('a');
        expect((await r.findAccountByEmail('a@example.com'))?.id).toBe('a');
        expect(await r.listLedger('a', 10)).toHaveLength(1);
        expect((await r.getMemory('a', 'k'))?.value).toBe('v');
      });
    });

    it('keeps nothing of a transaction that throws', async () => {
      const { store } = await open();
      await store.transact(async (tx) => tx.putAccount(account('a')));
      await expect(
        store.transact(async (tx) => {
          await tx.putAccount(account('a', 0));
          await tx.putMemory(memory('a', 'k'));
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      await store.read(async (r) => {
        expect((await r.getAccount('a'))?.balanceCents).toBe(50);
        expect(await r.getMemory('a', 'k')).toBeUndefined();
      });
    });

    it('serialises transactions: concurrent read-modify-write loses no update', async () => {
      const { store } = await open();
      await store.transact(async (tx) => tx.putAccount(account('a', 0)));
      await Promise.all(
        Array.from({ length: 50 }, () =>
          store.transact(async (tx) => {
            const a = (await tx.getAccount('a')) as Account;
            await new Promise((r) => setImmediate(r));
            await tx.putAccount({ ...a, balanceCents: a.balanceCents + 1 });
          }),
        ),
      );
      expect((await store.read((r) => r.getAccount('a')))?.balanceCents).toBe(50);
    });

    it('lists memories newest-updated first, by type, within a limit, per agent only', async () => {
      const { store } = await open();
      await withAgents(store, 'a', 'b');
      await store.transact(async (tx) => {
        await tx.putMemory(memory('a', 'one', '1', 'fact'));
        await tx.putMemory(memory('a', 'two', '2', 'context'));
        await tx.putMemory(memory('b', 'other', 'x', 'fact'));
      });
      await store.transact(async (tx) => {
        await tx.putMemory(memory('a', 'three', '3', 'fact'));
        await tx.putMemory(memory('a', 'one', '1b', 'fact')); // update moves it to the front
        const inTx = await tx.listMemories('a', { limit: 10 });
        expect(inTx.map((m) => m.key)).toEqual(['one', 'three', 'two']);
      });
      const all = await store.read((r) => r.listMemories('a', { limit: 10 }));
      expect(all.map((m) => m.key)).toEqual(['one', 'three', 'two']);
      const facts = await store.read((r) => r.listMemories('a', { type: 'fact', limit: 1 }));
      expect(facts.map((m) => m.value)).toEqual(['1b']);
    });

    it('deletes, counting within and after the transaction', async () => {
      const { store } = await open();
      await withAgents(store, 'a');
      await store.transact(async (tx) => {
        await tx.putMemory(memory('a', 'x'));
        await tx.putMemory(memory('a', 'y'));
      });
      await store.transact(async (tx) => {
        expect(await tx.deleteMemory('a', 'x')).toBe(true);
        expect(await tx.deleteMemory('a', 'x')).toBe(false);
        expect(await tx.countMemories('a')).toBe(1);
        expect((await tx.listMemories('a', { limit: 5 })).map((m) => m.key)).toEqual(['y']);
      });
      expect(await store.read((r) => r.countMemories('a'))).toBe(1);
    });

    it('judges expiry at the instant asked: lists and counts only the live, refreshes in place', async () => {
      const opened = await open();
      await withAgents(opened.store, 'a');
      const at = (minute: number) => `2026-11-21T00:${String(minute).padStart(2, '0')}:00.000Z`;
      await opened.store.transact(async (tx) => {
        await tx.putMemory({ ...memory('a', 'soon'), expiresAt: at(10), ttlSeconds: 600 });
        await tx.putMemory({ ...memory('a', 'never') });
        await tx.putMemory({ ...memory('a', 'later'), expiresAt: at(30), ttlSeconds: 1800 });
      });
      const keys = (list: Memory[]) => list.map((m) => m.key);
      const live = (store: StorePort, minute: number) =>
        store.read((r) => r.listMemories('a', { limit: 10, liveAt: at(minute) }));
      expect(keys(await live(opened.store, 5))).toEqual(['later', 'never', 'soon']);
      expect(keys(await live(opened.store, 10))).toEqual(['later', 'never']); // expiry at the instant: gone
      expect(await opened.store.read((r) => r.countMemories('a', at(20)))).toBe(2);
      expect(await opened.store.read((r) => r.countMemories('a', at(40)))).toBe(1);
      expect(await opened.store.read((r) => r.countMemories('a'))).toBe(3);
      await opened.store.transact(async (tx) => {
        expect(await tx.setMemoryExpiry('a', 'soon', at(50))).toBe(true);
        expect(await tx.setMemoryExpiry('a', 'missing', at(50))).toBe(false);
        expect(await tx.countMemories('a', at(40))).toBe(2);
      });
      const store = opened.reopen ? await opened.reopen() : opened.store;
      // A refresh is not an update: 'soon' keeps its place, last in the update order.
      expect(keys(await live(store, 40))).toEqual(['never', 'soon']);
      expect(await store.read((r) => r.getMemory('a', 'soon'))).toMatchObject({
        expiresAt: at(50),
        version: 1,
      });
    });

    it('keeps the newest versions of a key by rank, newest first, drops them, per key and agent', async () => {
      const opened = await open();
      await withAgents(opened.store, 'a', 'b');
      const version = (agentId: string, key: string, v: number, deleted = false): MemoryVersion => ({
        agentId,
        key,
        version: v,
        at: '2026-11-21T00:00:00.000Z',
        ...(deleted ? { deleted: true } : { value: `v${v}`, type: 'fact', metadata: { n: v } }),
      });
      await opened.store.transact(async (tx) => {
        // Not consecutive (a time without history leaves gaps): trimming keeps the newest three by rank.
        for (const v of [1, 2, 5, 9]) await tx.putMemoryVersion(version('a', 'k', v), 3);
        await tx.putMemoryVersion(version('a', 'k', 10, true), 3);
        await tx.putMemoryVersion(version('a', 'other', 1), 3);
        await tx.putMemoryVersion(version('b', 'k', 1), 3);
        expect((await tx.listMemoryVersions('a', 'k', 10)).map((e) => e.version)).toEqual([10, 9, 5]);
      });
      const store = opened.reopen ? await opened.reopen() : opened.store;
      const listed = await store.read((r) => r.listMemoryVersions('a', 'k', 2));
      expect(listed).toMatchObject([
        { version: 10, deleted: true },
        { version: 9, value: 'v9', type: 'fact', metadata: { n: 9 } },
      ]);
      await store.transact(async (tx) => {
        await tx.putMemoryVersion(version('a', 'k', 11), 1);
        expect((await tx.listMemoryVersions('a', 'k', 10)).map((e) => e.version)).toEqual([11]);
        await tx.dropMemoryVersions('a', 'k');
        expect(await tx.listMemoryVersions('a', 'k', 10)).toEqual([]);
      });
      expect(await store.read((r) => r.listMemoryVersions('a', 'k', 10))).toEqual([]);
      expect((await store.read((r) => r.listMemoryVersions('a', 'other', 10))).length).toBe(1);
      expect((await store.read((r) => r.listMemoryVersions('b', 'k', 10))).length).toBe(1);
    });

    it('queries memories: conditions, pages in update order after a position, a true total, per agent', async () => {
      const opened = await open();
      await withAgents(opened.store, 'a', 'b');
      const at = (second: number) => `2026-11-21T00:00:${String(second).padStart(2, '0')}.000Z`;
      await opened.store.transact(async (tx) => {
        for (let i = 0; i < 12; i++) {
          await tx.putMemory({
            ...memory('a', `k${i}`, `value ${i}`, i % 3 === 0 ? 'fact' : 'context'),
            metadata: {
              project: i % 2 === 0 ? 'apollo' : 'gemini',
              n: i,
              nul: 'a\u0000b',
              deep: { project: 'x' },
            },
            updatedAt: at(i),
            ...(i === 11 ? { expiresAt: at(30), ttlSeconds: 30 } : {}),
          });
        }
        await tx.putMemory({ ...memory('b', 'k1', 'other agent'), metadata: { project: 'apollo' } });
      });
      const store = opened.reopen ? await opened.reopen() : opened.store;
      const query = (q: Partial<MemoryQuery>) =>
        store.read((r) => r.queryMemories('a', { liveAt: at(40), limit: 100, ...q }));
      const keys = (page: { hits: { memory: Memory }[] }) => page.hits.map((h) => h.memory.key);

      // k11 expired at :30, so at :40 it is absent; newest first.
      expect(keys(await query({}))).toEqual([
        'k10',
        'k9',
        'k8',
        'k7',
        'k6',
        'k5',
        'k4',
        'k3',
        'k2',
        'k1',
        'k0',
      ]);
      expect((await query({ liveAt: at(20) })).total).toBe(12);
      expect(keys(await query({ types: ['fact'] }))).toEqual(['k9', 'k6', 'k3', 'k0']);
      expect(keys(await query({ types: [] }))).toEqual([]);
      expect(keys(await query({ metadata: { project: 'gemini', n: 5 } }))).toEqual(['k5']);
      expect(keys(await query({ metadata: { n: 5.0 } }))).toEqual(['k5']);
      expect(keys(await query({ metadata: { project: 'x' } }))).toEqual([]); // top-level fields only
      expect(keys(await query({ metadata: { nul: 'a\u0000b', n: 2 } }))).toEqual(['k2']);
      expect(keys(await query({ metadata: { missing: null } }))).toEqual([]);
      expect(keys(await query({ updatedAfter: at(3), updatedBefore: at(6) }))).toEqual(['k5', 'k4']);
      expect(keys(await query({ keyPrefix: 'k1' }))).toEqual(['k10', 'k1']);

      // Pages of 4 after each page's last position: every memory once, the total on every page.
      const seen: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 5; pages++) {
        const page = await query({ limit: 4, ...(after === undefined ? {} : { after }) });
        expect(page.total).toBe(11);
        seen.push(...keys(page));
        after = page.hits.at(-1)?.position;
        if (page.hits.length < 4) break;
      }
      expect(seen).toEqual(keys(await query({})));
      expect(keys(await query({ keyPrefix: 'k1', limit: 1 }))).toEqual(['k10']);
      const other = await store.read((r) => r.queryMemories('b', { liveAt: at(40), limit: 10 }));
      expect(other.hits.map((h) => h.memory.value)).toEqual(['other agent']);
      await expect(query({ after: 'not a position' })).rejects.toMatchObject({ code: 'invalid_input' });
    });

    it('ranks a text query: the key that is the query, then keys holding it, then by relevance', async () => {
      const { store } = await open();
      await withAgents(store, 'a', 'b');
      await store.transact(async (tx) => {
        const put = (key: string, value: string, metadata = {}) =>
          tx.putMemory({ ...memory('a', key, value), metadata });
        await put('notes/launch', 'We launched the rocket on Tuesday after two delays.');
        await put('Launch', 'A memory whose key is the query.');
        await put('groceries', 'Milk, eggs and bread.');
        await put('meeting', 'Talked about lunch.', { topic: 'launching' });
        await put('value-nul', 'before\u0000after launch');
        await tx.putMemory(memory('b', 'launch', 'another agent launches too'));
      });
      const found = await store.read((r) =>
        r.queryMemories('a', { liveAt: '2026-12-01T00:00:00.000Z', limit: 10, text: 'launch' }),
      );
      const keys = found.hits.map((h) => h.memory.key);
      expect(keys.slice(0, 2)).toEqual(['Launch', 'notes/launch']);
      expect(new Set(keys)).toEqual(new Set(['Launch', 'notes/launch', 'meeting', 'value-nul']));
      expect(found.total).toBe(4);
      for (const hit of found.hits) expect(hit.score).toBeTypeOf('number');
      const paged = await store.read((r) =>
        r.queryMemories('a', { liveAt: '2026-12-01T00:00:00.000Z', limit: 2, offset: 2, text: 'launch' }),
      );
      expect(paged.hits.map((h) => h.memory.key)).toEqual(keys.slice(2, 4));
      expect(paged.total).toBe(4);
      const none = await store.read((r) =>
        r.queryMemories('a', { liveAt: '2026-12-01T00:00:00.000Z', limit: 10, text: 'the and of' }),
      );
      expect(none).toEqual({ hits: [], total: 0 });
      // A write and a search in one transaction: the search sees the write.
      await store.transact(async (tx) => {
        await tx.putMemory(memory('a', 'fresh', 'launch pad'));
        await tx.deleteMemory('a', 'Launch');
        const inTx = await tx.queryMemories('a', {
          liveAt: '2026-12-01T00:00:00.000Z',
          limit: 10,
          text: 'launch',
        });
        expect(inTx.hits.map((h) => h.memory.key)).toContain('fresh');
        expect(inTx.hits.map((h) => h.memory.key)).not.toContain('Launch');
      });
    });

    it('keeps a memory version exactly, replaced with the memory, also across a reopen', async () => {
      const opened = await open();
      await withAgents(opened.store, 'a');
      await opened.store.transact(async (tx) => {
        await tx.putMemory({ ...memory('a', 'v'), version: 1 });
        await tx.putMemory({ ...memory('a', 'v', 'later'), version: 2_147_483_647 });
        expect((await tx.getMemory('a', 'v'))?.version).toBe(2_147_483_647);
      });
      const store = opened.reopen ? await opened.reopen() : opened.store;
      expect(await store.read((r) => r.getMemory('a', 'v'))).toMatchObject({
        value: 'later',
        version: 2_147_483_647,
      });
      expect((await store.read((r) => r.listMemories('a', { limit: 1 })))[0]?.version).toBe(2_147_483_647);
    });

    it('holds __proto__, constructor and toString as ordinary keys, also across a reopen', async () => {
      const opened = await open();
      await withAgents(opened.store, 'a');
      const keys = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
      await opened.store.transact(async (tx) => {
        for (const k of keys)
          await tx.putMemory({ ...memory('a', k, `v-${k}`), metadata: JSON.parse('{"__proto__":{"p":1}}') });
      });
      const store = opened.reopen ? await opened.reopen() : opened.store;
      for (const k of keys) {
        const m = await store.read((r) => r.getMemory('a', k));
        expect(m?.value).toBe(`v-${k}`);
        expect(JSON.stringify(m?.metadata)).toBe('{"__proto__":{"p":1}}');
      }
      expect(await store.read((r) => r.getMemory('a', 'value'))).toBeUndefined();
      expect(await store.read((r) => r.countMemories('a'))).toBe(4);
    });

    it('lists ledger entries newest first', async () => {
      const { store } = await open();
      await withAgents(store, 'a');
      await store.transact(async (tx) => {
        for (let n = 1; n <= 5; n++) await tx.appendLedger(entry('a', n));
      });
      const latest = await store.read((r) => r.listLedger('a', 2));
      expect(latest.map((e) => e.id)).toEqual(['txn_5', 'txn_4']);
    });

    it('keeps the OAuth client of a ledger entry, and no client on one without, across a reopen', async () => {
      const { store, reopen } = await open();
      await withAgents(store, 'a');
      const client = 'https://client.example/oauth/metadata.json';
      await store.transact(async (tx) => {
        await tx.appendLedger({ ...entry('a', 1), client });
        await tx.appendLedger(entry('a', 2));
      });
      const check = async (s: StorePort) => {
        const [second, first] = await s.read((r) => r.listLedger('a', 2));
        expect(first).toEqual({ ...entry('a', 1), client });
        expect(second).toEqual(entry('a', 2));
        expect(second).not.toHaveProperty('client');
        expect((await s.ledgerPage('a', { limit: 5 })).entries.map((e) => e.client)).toEqual([
          undefined,
          client,
        ]);
      };
      await check(store);
      if (reopen) await check(await reopen());
    });

    it('sums the debits since a moment, within and after a transaction', async () => {
      const opened = await open();
      await withAgents(opened.store, 'a');
      const at = (n: number, hour: string, cents: number): LedgerEntry => ({
        ...entry('a', n),
        at: `2026-11-21T${hour}:00:00.000Z`,
        amountCents: cents,
      });
      await opened.store.transact(async (tx) => {
        await tx.appendLedger(at(1, '01', -3));
        await tx.appendLedger(at(2, '05', 20)); // a credit: not spending
        await tx.appendLedger(at(3, '09', -2));
        expect(await tx.spentSince('a', '2026-11-21T05:00:00.000Z')).toBe(2);
      });
      const store = opened.reopen ? await opened.reopen() : opened.store;
      await store.transact(async (tx) => {
        await tx.appendLedger(at(4, '10', -1));
        expect(await tx.spentSince('a', '2026-11-21T00:00:00.000Z')).toBe(6);
      });
      expect(await store.read((r) => r.spentSince('a', '2026-11-21T09:00:00.000Z'))).toBe(3);
      expect(await store.read((r) => r.spentSince('a', '2026-11-21T11:00:00.000Z'))).toBe(0);
      expect(await store.read((r) => r.spentSince('nobody', '2026-11-21T00:00:00.000Z'))).toBe(0);
    });

    it('keeps idempotency records per agent and key, across a reopen, dropping those past retention', async () => {
      const opened = await open();
      const record = (agentId: string, key: string, createdAt: string) => ({
        agentId,
        key,
        fingerprint: `fp-${key}`,
        operation: 'memory_store',
        status: 200,
        body: { success: true, key },
        createdAt,
      });
      await opened.store.transact(async (tx) => {
        await tx.putIdempotency(record('a', 'old', '2026-11-20T00:00:00.000Z'));
        await tx.putIdempotency(record('a', 'k', '2026-11-21T00:00:00.000Z'));
        expect((await tx.getIdempotency('a', 'k'))?.fingerprint).toBe('fp-k');
      });
      expect(await opened.store.read((r) => r.getIdempotency('b', 'k'))).toBeUndefined();
      const store = opened.reopen ? await opened.reopen() : opened.store;
      expect((await store.read((r) => r.getIdempotency('a', 'k')))?.body).toEqual({
        success: true,
        key: 'k',
      });
      // Past their retention, records go: on the next write on the file stores (a record written more than
      // 24 hours after another drops the older one), in the background sweep on PostgreSQL (sweeper.test.ts).
      if (adapter.retention === 'on-write') {
        expect(await store.read((r) => r.getIdempotency('a', 'old'))).toBeDefined();
        await store.transact((tx) => tx.putIdempotency(record('b', 'new', '2026-11-21T00:00:01.000Z')));
        expect(await store.read((r) => r.getIdempotency('a', 'old'))).toBeUndefined();
        expect(await store.read((r) => r.getIdempotency('a', 'k'))).toBeDefined();
      }
    });

    it('gives an idempotency key to one request at a time, and replays it once stored', async () => {
      const { store } = await open();
      const claim = (fingerprint: string, key = 'k', agentId = 'a') =>
        store.claimIdempotency({
          agentId,
          key,
          fingerprint,
          operation: 'memory_store',
          now: '2026-11-21T00:00:10.000Z',
          storedAfter: '2026-11-20T00:00:10.000Z',
          leaseMs: 60_000,
        });
      const first = await claim('fp-1');
      expect(first.state).toBe('claimed');
      const token = (first as { token: string }).token;
      // While it runs, the same key is taken, whatever the request; other keys and agents are free.
      expect(await claim('fp-1')).toEqual({ state: 'running', fingerprint: 'fp-1' });
      expect(await claim('fp-2')).toEqual({ state: 'running', fingerprint: 'fp-1' });
      expect((await claim('fp-1', 'other')).state).toBe('claimed');
      expect((await claim('fp-1', 'k', 'b')).state).toBe('claimed');
      // Releasing with another token does nothing.
      await store.releaseIdempotency('a', 'k', 'not-the-token');
      expect((await claim('fp-1')).state).toBe('running');
      // Finished: the record is stored in the charging transaction, then the claim released.
      const record = {
        agentId: 'a',
        key: 'k',
        fingerprint: 'fp-1',
        operation: 'memory_store',
        status: 200,
        body: { success: true },
        createdAt: '2026-11-21T00:00:05.000Z',
      };
      await store.transact((tx) => tx.putIdempotency(record, token));
      await store.releaseIdempotency('a', 'k', token);
      expect(await claim('fp-1')).toEqual({ state: 'stored', record });
      expect(await claim('fp-2')).toEqual({ state: 'stored', record });
    });

    it('frees a key whose request failed, and one whose record is past retention', async () => {
      const { store } = await open();
      const claim = (storedAfter = '2026-11-20T00:00:10.000Z') =>
        store.claimIdempotency({
          agentId: 'a',
          key: 'k',
          fingerprint: 'fp',
          operation: 'memory_store',
          now: '2026-11-21T00:00:10.000Z',
          storedAfter,
          leaseMs: 60_000,
        });
      const failed = await claim();
      await store.releaseIdempotency('a', 'k', (failed as { token: string }).token);
      const again = await claim();
      expect(again.state).toBe('claimed');
      const token = (again as { token: string }).token;
      const createdAt = '2026-11-20T00:00:10.000Z';
      await store.transact((tx) =>
        tx.putIdempotency(
          {
            agentId: 'a',
            key: 'k',
            fingerprint: 'fp',
            operation: 'memory_store',
            status: 200,
            body: {},
            createdAt,
          },
          token,
        ),
      );
      await store.releaseIdempotency('a', 'k', token);
      // One millisecond inside the retention: stored; exactly at its boundary: gone, and the key is taken.
      expect((await claim('2026-11-20T00:00:09.999Z')).state).toBe('stored');
      expect((await claim('2026-11-20T00:00:10.000Z')).state).toBe('claimed');
    });

    it('refuses work after close', async () => {
      const { store } = await open();
      await store.close();
      await expect(store.transact(async () => 1)).rejects.toThrow(/closed/);
    });
  });
}

describe('JsonStore durability contract', () => {
  it('acknowledges a commit only once it is durable, and reads wait for what they can see', async () => {
    const { JsonStore } = await import('../../src/store/json/json-store.js');
    const { JsonState } = await import('../../src/store/json/json-state.js');
    const flushes: (() => void)[] = [];
    let durableSeq = 0;
    const waiting: { seq: number; resolve: () => void }[] = [];
    const persistence = {
      append: (seq: number) =>
        new Promise<void>((resolve) =>
          flushes.push(() => {
            durableSeq = seq;
            resolve();
            for (const w of waiting.splice(0)) if (w.seq <= durableSeq) w.resolve();
          }),
        ),
      waitFor: (seq: number) =>
        seq <= durableSeq
          ? Promise.resolve()
          : new Promise<void>((resolve) => waiting.push({ seq, resolve })),
      compactionDue: () => false,
      compact: async () => ({ folded: Promise.resolve() }),
      close: async () => {},
    };
    const store = new JsonStore(new JsonState(), persistence);
    let acknowledged = false;
    const commit = store
      .transact(async (tx) => tx.putAccount(account('a', 50)))
      .then(() => {
        acknowledged = true;
      });
    let readDone = false;
    await new Promise((r) => setTimeout(r, 10));
    const read = store
      .read((r) => r.getAccount('a'))
      .then((a) => {
        readDone = true;
        return a;
      });
    // A second transaction runs while the first waits for its flush (group commit).
    const second = store.transact(async (tx) => tx.putMemory(memory('a', 'k')));
    await new Promise((r) => setTimeout(r, 10));
    expect([acknowledged, readDone, flushes.length]).toEqual([false, false, 2]);
    flushes[0]?.();
    await commit;
    expect((await read)?.balanceCents).toBe(50);
    flushes[1]?.();
    await second;
  });

  it('refuses all work after the log fails, and never acknowledges the failed commit', async () => {
    const { JsonStore } = await import('../../src/store/json/json-store.js');
    const { JsonState } = await import('../../src/store/json/json-state.js');
    let fail = false;
    const persistence = {
      append: async () => {
        if (fail) throw new Error('disk gone');
      },
      waitFor: async () => {},
      compactionDue: () => false,
      compact: async () => ({ folded: Promise.resolve() }),
      close: async () => {},
    };
    const store: StorePort = new JsonStore(new JsonState(), persistence);
    await store.transact(async (tx) => tx.putAccount(account('a', 50)));
    fail = true;
    await expect(store.transact(async (tx) => tx.putAccount(account('a', 0)))).rejects.toThrow(
      /could not save/,
    );
    await expect(store.read((r) => r.getAccount('a'))).rejects.toThrow(/needs a restart/);
    await expect(store.transact(async () => 1)).rejects.toThrow(/needs a restart/);
  });
});
