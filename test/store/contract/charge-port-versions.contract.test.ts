/**
 * The store contract of the charge port, part 3: how memories are written (core/memory-writes.ts and its SQL
 * copy): version numbers, delete markers, the history kept (`keep`, retention), restore, expiry and its
 * refresh, batches and imports. Run against the JSON file store and PostgreSQL (adapters.ts).
 */
import { expect, it } from 'vitest';
import type { ImportPlanner } from '../../../src/core/charge-port.js';
import { AppError } from '../../../src/core/errors.js';
import {
  at,
  contractSuite,
  done,
  expectRefused,
  historyOf,
  item,
  ledgerOf,
  marker,
  memory,
  memoryOf,
  planner,
  put,
  RULES,
  remove,
  request,
  stateOf,
  version,
} from './adapters.js';

contractSuite('charge port writes', (h) => {
  it('versions: 1, 2, 3; a delete takes the next as its marker; numbers go on after a delete or an expiry', async () => {
    const agentId = await h.agent();
    const [one] = await put(h, agentId, [item('k', 'one')]);
    const [two] = await put(h, agentId, [item('k', 'two', { metadata: { n: 2 } })], at(1));
    expect([one, two]).toStrictEqual([
      memory(agentId, 'k', { value: 'one' }),
      memory(agentId, 'k', { value: 'two', metadata: { n: 2 }, updatedAt: at(1), version: 2 }),
    ]);
    await remove(h, agentId, 'k', at(2));
    const outcome = done(
      await h.store.charges.storeMemories(request(agentId, { at: at(3) }), [item('k', 'four')], RULES),
    );
    const four = memory(agentId, 'k', { value: 'four', createdAt: at(3), updatedAt: at(3), version: 4 });
    expect(outcome.results).toStrictEqual([{ memory: four, created: true }]);
    await put(h, agentId, [item('k', 'five', { expiresAt: at(5), ttlSeconds: 1 })], at(4));
    // Expired at its instant: absent, so a store creates it anew, with the next number.
    const [six] = await put(h, agentId, [item('k', 'six')], at(5));
    expect(six).toStrictEqual(
      memory(agentId, 'k', { value: 'six', createdAt: at(5), updatedAt: at(5), version: 6 }),
    );
    // Five kept: version 1 is gone.
    expect(await historyOf(h.store, agentId, 'k')).toStrictEqual([
      version(agentId, 'k', { version: 6, at: at(5), value: 'six' }),
      version(agentId, 'k', { version: 5, at: at(4), value: 'five', ttlSeconds: 1 }),
      version(agentId, 'k', { version: 4, at: at(3), value: 'four' }),
      marker(agentId, 'k', 3, at(2)),
      version(agentId, 'k', { version: 2, at: at(1), value: 'two', metadata: { n: 2 } }),
    ]);
  });

  it('retention: a deleted key keeps its history 3600 s after its newest entry; then a new life, numbers going on', async () => {
    const agentId = await h.agent();
    for (const key of ['edge', 'late', 'lapsed']) {
      await put(h, agentId, [item(key, 'one')]);
      await put(h, agentId, [
        item(key, 'two', key === 'lapsed' ? { expiresAt: at(10), ttlSeconds: 10 } : {}),
      ]);
      if (key !== 'lapsed') await remove(h, agentId, key, at(0));
    }
    const [edge] = await put(h, agentId, [item('edge', 'three')], at(3600));
    const [late] = await put(h, agentId, [item('late', 'three')], at(3601));
    const [lapsed] = await put(h, agentId, [item('lapsed', 'three')], at(3601));
    expect([edge?.version, late?.version, lapsed?.version]).toEqual([4, 4, 3]);
    expect(late).toStrictEqual(
      memory(agentId, 'late', { value: 'three', createdAt: at(3601), updatedAt: at(3601), version: 4 }),
    );
    expect((await historyOf(h.store, agentId, 'edge')).map((v) => v.version)).toEqual([4, 3, 2, 1]);
    expect(await historyOf(h.store, agentId, 'late')).toStrictEqual([
      version(agentId, 'late', { version: 4, at: at(3601), value: 'three' }),
    ]);
    expect(await historyOf(h.store, agentId, 'lapsed')).toStrictEqual([
      version(agentId, 'lapsed', { version: 3, at: at(3601), value: 'three' }),
    ]);
  });

  it('keep: the newest `keep` versions stay, whatever it was before; keep=0 keeps none, numbers go on', async () => {
    const agentId = await h.agent();
    const two = { ...RULES, keep: 2 };
    for (const value of ['1', '2', '3', '4'])
      await put(h, agentId, [item('k', value)], at(Number(value)), two);
    expect(await historyOf(h.store, agentId, 'k')).toStrictEqual([
      version(agentId, 'k', { version: 4, at: at(4), value: '4' }),
      version(agentId, 'k', { version: 3, at: at(3), value: '3' }),
    ]);
    // Written under keep 5, then one write under keep 2: trimmed to 2.
    for (const value of ['1', '2', '3', '4', '5']) await put(h, agentId, [item('t', value)]);
    await put(h, agentId, [item('t', '6')], at(1), two);
    expect((await historyOf(h.store, agentId, 't')).map((v) => v.version)).toEqual([6, 5]);
    // The history's limit: the newest.
    const listed = done(await h.store.charges.memoryHistory(request(agentId, { at: at(2) }), 't', 1, RULES));
    expect(listed).toStrictEqual({
      currentVersion: 6,
      versions: [version(agentId, 't', { version: 6, at: at(1), value: '6' })],
      balanceCents: 99,
    });

    const none = { ...RULES, keep: 0 };
    for (const value of ['1', '2', '3']) await put(h, agentId, [item('z', value)], at(0), none);
    expect(await memoryOf(h.store, agentId, 'z')).toStrictEqual(
      memory(agentId, 'z', { value: '3', version: 3 }),
    );
    expect(await historyOf(h.store, agentId, 'z')).toStrictEqual([]);
    const empty = done(await h.store.charges.memoryHistory(request(agentId), 'z', 10, none));
    expect(empty).toStrictEqual({ currentVersion: 3, versions: [], balanceCents: 98 });
    // A delete leaves its marker alone; the next write takes the number after it and drops it.
    await remove(h, agentId, 'z', at(1), 0);
    expect(await historyOf(h.store, agentId, 'z')).toStrictEqual([marker(agentId, 'z', 4, at(1))]);
    const [five] = await put(h, agentId, [item('z', '5')], at(2), none);
    expect(five).toStrictEqual(
      memory(agentId, 'z', { value: '5', createdAt: at(2), updatedAt: at(2), version: 5 }),
    );
    expect(await historyOf(h.store, agentId, 'z')).toStrictEqual([]);
    // An expired memory leaves no trace while no history is kept: its number is taken again.
    await put(h, agentId, [item('e', 'x', { expiresAt: at(1), ttlSeconds: 1 })], at(0), none);
    await put(h, agentId, [item('e', 'x', { expiresAt: at(1), ttlSeconds: 1 })], at(0), none);
    expect((await memoryOf(h.store, agentId, 'e'))?.version).toBe(2);
    const [again] = await put(h, agentId, [item('e', 'y')], at(2), none);
    expect(again?.version).toBe(1);
  });

  it('restore: an older version written again as the next version, its time to live counted from the restore', async () => {
    const agentId = await h.agent();
    await put(h, agentId, [
      item('k', 'one', { type: 'fact', metadata: { m: 1 }, expiresAt: at(50), ttlSeconds: 50 }),
    ]);
    await put(h, agentId, [item('k', 'two')], at(1));
    await remove(h, agentId, 'k', at(2));
    const restore = async (number: number, when: string) =>
      done(
        await h.store.charges.restoreMemory(
          request(agentId, { at: when, operation: 'memory_restore' }),
          { key: 'k', version: number },
          RULES,
        ),
      );
    const four = memory(agentId, 'k', {
      value: 'one',
      type: 'fact',
      metadata: { m: 1 },
      createdAt: at(10),
      updatedAt: at(10),
      version: 4,
      expiresAt: at(60),
      ttlSeconds: 50,
    });
    expect(await restore(1, at(10))).toStrictEqual({ memory: four, created: true, balanceCents: 99 });
    const five = memory(agentId, 'k', { value: 'two', createdAt: at(10), updatedAt: at(11), version: 5 });
    expect(await restore(2, at(11))).toStrictEqual({ memory: five, created: false, balanceCents: 98 });
    expect(await memoryOf(h.store, agentId, 'k')).toStrictEqual(five);
    expect(await historyOf(h.store, agentId, 'k')).toStrictEqual([
      version(agentId, 'k', { version: 5, at: at(11), value: 'two' }),
      version(agentId, 'k', {
        version: 4,
        at: at(10),
        value: 'one',
        type: 'fact',
        metadata: { m: 1 },
        ttlSeconds: 50,
      }),
      marker(agentId, 'k', 3, at(2)),
      version(agentId, 'k', { version: 2, at: at(1), value: 'two' }),
      version(agentId, 'k', { value: 'one', type: 'fact', metadata: { m: 1 }, ttlSeconds: 50 }),
    ]);
    // Over an expired memory: created anew.
    await put(h, agentId, [item('k', 'six', { expiresAt: at(13), ttlSeconds: 1 })], at(12));
    const seven = await restore(6, at(13));
    expect(seven).toStrictEqual({
      memory: memory(agentId, 'k', {
        value: 'six',
        createdAt: at(13),
        updatedAt: at(13),
        version: 7,
        expiresAt: at(14),
        ttlSeconds: 1,
      }),
      created: true,
      balanceCents: 97,
    });
  });

  it('expiry: refresh moves it to at + ttl and changes nothing else; a memory is absent from its expiry on', async () => {
    const agentId = await h.agent();
    await put(h, agentId, [item('k', 'v', { expiresAt: at(60), ttlSeconds: 60 })]);
    await put(h, agentId, [item('j'), item('fixed', 'v', { expiresAt: at(60) })], at(1));
    const retrieve = async (key: string, when: string, refresh: boolean) =>
      h.store.charges.retrieveMemory(
        request(agentId, { at: when, operation: 'memory_retrieve' }),
        key,
        refresh,
      );
    const refreshed = memory(agentId, 'k', { expiresAt: at(90), ttlSeconds: 60 });
    expect(await retrieve('k', at(30), true)).toStrictEqual({ memory: refreshed, balanceCents: 99 });
    expect(await memoryOf(h.store, agentId, 'k')).toStrictEqual(refreshed);
    // Not an update: its place in the update order stays.
    const order = await h.store.read((r) => r.listMemories(agentId, { limit: 10 }));
    expect(order.map((m) => m.key)).toEqual(['fixed', 'j', 'k']);
    expect(await historyOf(h.store, agentId, 'k')).toStrictEqual([version(agentId, 'k', { ttlSeconds: 60 })]);
    expect(await retrieve('k', at(89), false)).toStrictEqual({ memory: refreshed, balanceCents: 98 });
    expect(await retrieve('k', at(90), false)).toStrictEqual({ refused: 'not_found' });
    // Without a time to live, refresh leaves the expiry; without an expiry, there is none to move.
    const fixed = memory(agentId, 'fixed', { createdAt: at(1), updatedAt: at(1), expiresAt: at(60) });
    expect(await retrieve('fixed', at(30), true)).toStrictEqual({ memory: fixed, balanceCents: 97 });
    const j = memory(agentId, 'j', { createdAt: at(1), updatedAt: at(1) });
    expect(await retrieve('j', at(30), true)).toStrictEqual({ memory: j, balanceCents: 96 });
    expect(await memoryOf(h.store, agentId, 'fixed')).toStrictEqual(fixed);
  });

  it('batch: each item sees those before it, in order', async () => {
    const agentId = await h.agent();
    const outcome = done(
      await h.store.charges.storeMemories(
        request(agentId, { cents: 5, operation: 'memory_store_batch' }),
        [
          item('a', '1', { createOnly: true }),
          item('a', '2', { expectedVersion: 1 }),
          item('b', '1', { type: 'workflow' }),
          item('a', '3', { expectedVersion: 2, expiresAt: at(9), ttlSeconds: 9 }),
        ],
        RULES,
      ),
    );
    expect(outcome).toStrictEqual({
      results: [
        { memory: memory(agentId, 'a', { value: '1' }), created: true },
        { memory: memory(agentId, 'a', { value: '2', version: 2 }), created: false },
        { memory: memory(agentId, 'b', { value: '1', type: 'workflow' }), created: true },
        {
          memory: memory(agentId, 'a', { value: '3', version: 3, expiresAt: at(9), ttlSeconds: 9 }),
          created: false,
        },
      ],
      balanceCents: 95,
    });
    expect((await historyOf(h.store, agentId, 'a')).map((v) => v.version)).toEqual([3, 2, 1]);
    expect(await ledgerOf(h.store, agentId)).toHaveLength(2);
  });

  it('import: the plan written, its cents charged once; kept times; a kept version only for a key with no trace', async () => {
    const agentId = await h.agent({ cents: 10 });
    await put(h, agentId, [item('live', 'old')]);
    await put(h, agentId, [item('dead')]);
    await remove(h, agentId, 'dead', at(0));
    await put(h, agentId, [item('old')], at(-7200));
    await remove(h, agentId, 'old', at(-7200));
    const kept = { createdAt: '2020-01-01T00:00:00.000Z', updatedAt: '2021-01-01T00:00:00.000Z', version: 7 };
    const line = (key: string, fields: object = {}) => ({
      key,
      value: `new ${key}`,
      type: 'fact' as const,
      metadata: { key },
      ...fields,
    });
    const plan = planner(
      agentId,
      [
        line('fresh', { kept }),
        line('live', { kept }),
        line('dead', { kept: { version: 7 } }),
        line('old', { kept: { version: 7 } }),
        line('plain', { expiresAt: at(100), ttlSeconds: 100 }),
      ],
      5,
      { success: true },
    );
    const charge = request(agentId, { cents: 999, operation: 'memory_import', entryId: 'txn_import' });
    const outcome = done(await h.store.charges.importMemories(charge, plan, RULES));
    const written = (key: string, fields: object) =>
      memory(agentId, key, { value: `new ${key}`, type: 'fact', metadata: { key }, ...fields });
    expect(outcome).toStrictEqual({
      written: [
        written('fresh', kept),
        written('live', { ...kept, version: 2 }),
        written('dead', { version: 3 }),
        written('old', { version: 3 }),
        written('plain', { expiresAt: at(100), ttlSeconds: 100 }),
      ],
      answer: { success: true },
      balanceCents: 5,
    });
    expect(plan.plans).toBe(1);
    expect((await ledgerOf(h.store, agentId))[0]).toStrictEqual({
      id: 'txn_import',
      agentId,
      at: at(0),
      operation: 'memory_import',
      amountCents: -5,
      balanceAfterCents: 5,
      costCents: 5,
    });
    expect(await historyOf(h.store, agentId, 'fresh')).toStrictEqual([
      version(agentId, 'fresh', { version: 7, value: 'new fresh', type: 'fact', metadata: { key: 'fresh' } }),
    ]);
    expect((await historyOf(h.store, agentId, 'old')).map((v) => v.version)).toEqual([3]);
    expect((await historyOf(h.store, agentId, 'dead')).map((v) => v.version)).toEqual([3, 2, 1]);

    // Priced after its plan: more than the balance is refused, nothing written.
    const keys = ['fresh', 'more'];
    const dear = planner(agentId, [line('more')], 6, {});
    await expectRefused(
      h.store,
      agentId,
      keys,
      () =>
        h.store.charges.importMemories(
          request(agentId, { cents: 0, operation: 'memory_import' }),
          dear,
          RULES,
        ),
      { refused: 'insufficient_credits', balanceCents: 5 },
    );
    // The plan's own error (the core's quota of an import) fails the import, nothing written.
    const quota = new AppError('quota_exceeded', 'The import would create 1 memories', { memories_limit: 1 });
    const refusing: ImportPlanner = async () => {
      throw quota;
    };
    const before = await stateOf(h.store, agentId, keys);
    await expect(
      h.store.charges.importMemories(request(agentId, { cents: 0 }), refusing, RULES),
    ).rejects.toBe(quota);
    expect(await stateOf(h.store, agentId, keys)).toStrictEqual(before);
  });

  // Registered for PostgreSQL only (the JSON store plans inside its transaction: nothing changes under it).
  if (h.kind === 'postgres')
    it('import on PostgreSQL: memories created since the plan past the quota refuse it import_quota_exceeded', async () => {
      // Only here: the plan is made on a read and the statement checks the quota again (the JSON store plans in
      // its transaction, where nothing changes under it).
      const agentId = await h.agent();
      await put(h, agentId, [item('a')]);
      const rules = { ...RULES, quota: 2 };
      const plan: ImportPlanner = async () => {
        await put(h, agentId, [item('b')], at(0), rules);
        return {
          items: [{ key: 'x', value: 'x', type: 'context', metadata: {}, plannedVersion: null, kept: {} }],
          cents: 1,
          answer: {},
        };
      };
      const keys = ['x'];
      const before = await stateOf(h.store, agentId, keys);
      expect(await h.store.charges.importMemories(request(agentId, { cents: 0 }), plan, rules)).toStrictEqual(
        {
          refused: 'import_quota_exceeded',
          held: 2,
          created: 1,
        },
      );
      const after = await stateOf(h.store, agentId, keys);
      expect(after.memories.map((m) => m.key)).toEqual(['b', 'a']);
      expect({ ...after, memories: before.memories, count: before.count }).toStrictEqual(before);
    });
});
