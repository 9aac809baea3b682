/**
 * The store contract of the charge port, part 2: the answer kept for a request's idempotency claim is the
 * core's answer (core/memory-answers.ts, or the one given to `charge`/`importMemories` with the balance set),
 * byte for byte; and the ledger entry a charge appends, whole, with its seq. Run against the JSON file store
 * and PostgreSQL (adapters.ts).
 */
import { expect, it } from 'vitest';
import {
  batchAnswer,
  historyAnswer,
  restoreAnswer,
  retrieveAnswer,
  storedAnswer,
} from '../../../src/core/memory-answers.js';
import type { JsonObject, LedgerEntry } from '../../../src/core/model.js';
import {
  at,
  claim,
  contractSuite,
  done,
  expectKept,
  item,
  ledgerOf,
  marker,
  memory,
  newestSeq,
  planner,
  put,
  RULES,
  remove,
  request,
  version,
} from './adapters.js';

/** A value and metadata that a store must keep to the byte: NUL, quotes, backslashes, text past U+FFFF. */
const VALUE = 'a\u0000b "quoted" \\ back\\slash\nline é 日本 😀 \u2028 end';
const METADATA: JsonObject = {
  z: 1,
  a: { nested: [1, 'x"y', null, true, { deep: 'é\u0000' }] },
  'ü key': 1.5,
  empty: {},
  list: [],
};

contractSuite('charge port answers and ledger', (h) => {
  it('retrieve: the kept answer is retrieveAnswer of the memory (its expiry refreshed)', async () => {
    const agentId = await h.agent({ cents: 10 });
    await put(h, agentId, [
      item('k', VALUE, { type: 'fact', metadata: METADATA, expiresAt: at(60), ttlSeconds: 60 }),
    ]);
    const held = await claim(h.store, agentId, 'idem-retrieve', 'memory_retrieve');
    const charge = request(agentId, {
      at: at(30),
      cents: 2,
      operation: 'memory_retrieve',
      ref: { memoryKey: 'k' },
      claim: held,
    });
    const result = done(await h.store.charges.retrieveMemory(charge, 'k', true));
    const expected = memory(agentId, 'k', {
      value: VALUE,
      type: 'fact',
      metadata: METADATA,
      expiresAt: at(90),
      ttlSeconds: 60,
    });
    expect(result).toStrictEqual({ memory: expected, balanceCents: 8 });
    await expectKept(h.store, agentId, held, at(30), retrieveAnswer(expected, 2, 8));
  });

  it('store: the kept answer is storedAnswer of the memory written, created or updated', async () => {
    const agentId = await h.agent({ cents: 10 });
    const first = await claim(h.store, agentId, 'idem-store-1', 'memory_store');
    const created = done(
      await h.store.charges.storeMemories(
        request(agentId, { cents: 3, ref: { memoryKey: 'k' }, claim: first }),
        [item('k', VALUE, { type: 'preference', metadata: METADATA })],
        RULES,
      ),
    );
    const one = memory(agentId, 'k', { value: VALUE, type: 'preference', metadata: METADATA });
    expect(created).toStrictEqual({ results: [{ memory: one, created: true }], balanceCents: 7 });
    await expectKept(h.store, agentId, first, at(0), storedAnswer(one, true, 3, 7));

    const second = await claim(h.store, agentId, 'idem-store-2', 'memory_store');
    const updated = done(
      await h.store.charges.storeMemories(
        request(agentId, { at: at(5), cents: 3, claim: second }),
        [item('k', '', { expectedVersion: 1, expiresAt: at(105), ttlSeconds: 100 })],
        RULES,
      ),
    );
    const two = memory(agentId, 'k', {
      value: '',
      updatedAt: at(5),
      version: 2,
      expiresAt: at(105),
      ttlSeconds: 100,
    });
    expect(updated).toStrictEqual({ results: [{ memory: two, created: false }], balanceCents: 4 });
    await expectKept(h.store, agentId, second, at(5), storedAnswer(two, false, 3, 4));
  });

  it('batch: the kept answer is batchAnswer of every item, in order', async () => {
    const agentId = await h.agent({ cents: 10 });
    await put(h, agentId, [item('b')]);
    const held = await claim(h.store, agentId, 'idem-batch', 'memory_store_batch');
    const result = done(
      await h.store.charges.storeMemories(
        request(agentId, { at: at(1), cents: 4, operation: 'memory_store_batch', claim: held }),
        [
          item('a', VALUE, { metadata: METADATA }),
          item('b', 'b2', { type: 'workflow', expectedVersion: 1 }),
          item('a', 'a2', { expectedVersion: 1, createOnly: false }),
        ],
        RULES,
      ),
    );
    const results = [
      {
        memory: memory(agentId, 'a', {
          value: VALUE,
          metadata: METADATA,
          createdAt: at(1),
          updatedAt: at(1),
        }),
        created: true,
      },
      {
        memory: memory(agentId, 'b', { value: 'b2', type: 'workflow', updatedAt: at(1), version: 2 }),
        created: false,
      },
      {
        memory: memory(agentId, 'a', { value: 'a2', createdAt: at(1), updatedAt: at(1), version: 2 }),
        created: false,
      },
    ];
    expect(result).toStrictEqual({ results, balanceCents: 6 });
    await expectKept(h.store, agentId, held, at(1), batchAnswer(results, 4, 6));
  });

  it('history: the kept answer is historyAnswer of the entries, delete markers included', async () => {
    const agentId = await h.agent({ cents: 10 });
    await put(h, agentId, [item('k', VALUE, { metadata: METADATA, expiresAt: at(100), ttlSeconds: 100 })]);
    await remove(h, agentId, 'k', at(1));
    await put(h, agentId, [item('k', 'back', { type: 'fact' })], at(2));
    const held = await claim(h.store, agentId, 'idem-history', 'memory_history');
    const charge = request(agentId, { at: at(3), cents: 1, operation: 'memory_history', claim: held });
    const result = done(await h.store.charges.memoryHistory(charge, 'k', 10, RULES));
    const third = version(agentId, 'k', { version: 3, at: at(2), value: 'back', type: 'fact' });
    const versions = [
      third,
      marker(agentId, 'k', 2, at(1)),
      version(agentId, 'k', { value: VALUE, metadata: METADATA, ttlSeconds: 100 }),
    ];
    expect(result).toStrictEqual({ currentVersion: 3, versions, balanceCents: 9 });
    await expectKept(h.store, agentId, held, at(3), historyAnswer('k', 3, versions, 1, 9));

    // Of a deleted key (current null), limited to the newest.
    await remove(h, agentId, 'k', at(4));
    const gone = await claim(h.store, agentId, 'idem-history-gone', 'memory_history');
    const after = done(
      await h.store.charges.memoryHistory(
        request(agentId, { at: at(5), cents: 1, operation: 'memory_history', claim: gone }),
        'k',
        2,
        RULES,
      ),
    );
    const newest = [marker(agentId, 'k', 4, at(4)), third];
    expect(after).toStrictEqual({ currentVersion: null, versions: newest, balanceCents: 8 });
    await expectKept(h.store, agentId, gone, at(5), historyAnswer('k', null, newest, 1, 8));
  });

  it('restore: the kept answer is restoreAnswer of the memory written, with restored_from', async () => {
    const agentId = await h.agent({ cents: 10 });
    await put(h, agentId, [item('k', VALUE, { metadata: METADATA, expiresAt: at(100), ttlSeconds: 100 })]);
    await put(h, agentId, [item('k', 'two')], at(1));
    const held = await claim(h.store, agentId, 'idem-restore', 'memory_restore');
    const result = done(
      await h.store.charges.restoreMemory(
        request(agentId, { at: at(2), cents: 2, operation: 'memory_restore', claim: held }),
        { key: 'k', version: 1, expectedVersion: 2 },
        RULES,
      ),
    );
    const restored = memory(agentId, 'k', {
      value: VALUE,
      metadata: METADATA,
      updatedAt: at(2),
      version: 3,
      expiresAt: at(102),
      ttlSeconds: 100,
    });
    expect(result).toStrictEqual({ memory: restored, created: false, balanceCents: 8 });
    await expectKept(h.store, agentId, held, at(2), restoreAnswer(restored, false, 1, 2, 8));
  });

  it('import and charge: the kept answer is the one given, its credit_balance_cents set in place', async () => {
    const agentId = await h.agent({ cents: 10 });
    const answer = {
      success: true,
      dry_run: false,
      credit_balance_cents: 0,
      lines: 1,
      note: VALUE,
      meta: METADATA,
    };
    const imported = await claim(h.store, agentId, 'idem-import', 'memory_import');
    const plan = planner(agentId, [{ key: 'k', value: VALUE, type: 'fact', metadata: METADATA }], 3, answer);
    const result = done(
      await h.store.charges.importMemories(
        request(agentId, { cents: 0, operation: 'memory_import', claim: imported }),
        plan,
        RULES,
      ),
    );
    expect(result).toStrictEqual({
      written: [memory(agentId, 'k', { value: VALUE, type: 'fact', metadata: METADATA })],
      answer,
      balanceCents: 7,
    });
    expect(plan.plans).toBe(1);
    await expectKept(h.store, agentId, imported, at(0), { ...answer, credit_balance_cents: 7 });

    const charged = await claim(h.store, agentId, 'idem-charge', 'memory_search');
    const page = {
      success: true,
      results: [{ memory_key: 'k', memory_value: VALUE }],
      metadata: METADATA,
      cost_cents: 2,
    };
    const outcome = await h.store.charges.charge(
      request(agentId, { at: at(1), cents: 2, operation: 'memory_search', claim: charged }),
      page,
    );
    expect(outcome).toStrictEqual({ balanceCents: 5 });
    await expectKept(h.store, agentId, charged, at(1), { ...page, credit_balance_cents: 5 });
  });

  it('a free operation keeps its answer with the balance, and appends no ledger entry', async () => {
    const agentId = await h.agent({ cents: 10 });
    const free = (key: string, operation: string) => claim(h.store, agentId, key, operation);
    const stored = await free('idem-free-store', 'memory_store');
    const [written] = done(
      await h.store.charges.storeMemories(request(agentId, { cents: 0, claim: stored }), [item('k')], RULES),
    ).results;
    await expectKept(h.store, agentId, stored, at(0), storedAnswer(memory(agentId, 'k'), true, 0, 10));
    expect(written?.memory).toStrictEqual(memory(agentId, 'k'));
    const got = await free('idem-free-retrieve', 'memory_retrieve');
    done(
      await h.store.charges.retrieveMemory(
        request(agentId, { cents: 0, operation: 'memory_retrieve', claim: got }),
        'k',
        false,
      ),
    );
    await expectKept(h.store, agentId, got, at(0), retrieveAnswer(memory(agentId, 'k'), 0, 10));
    const searched = await free('idem-free-charge', 'memory_search');
    expect(
      await h.store.charges.charge(
        request(agentId, { cents: 0, operation: 'memory_search', claim: searched }),
        { ok: 1 },
      ),
    ).toStrictEqual({
      balanceCents: 10,
    });
    await expectKept(h.store, agentId, searched, at(0), { ok: 1, credit_balance_cents: 10 });
    const listed = done(await h.store.charges.memoryHistory(request(agentId, { cents: 0 }), 'k', 5, RULES));
    expect(listed.balanceCents).toBe(10);
    const imported = await free('idem-free-import', 'memory_import');
    const plan = planner(agentId, [{ key: 'i', value: 'v', type: 'context', metadata: {} }], 0, { n: 1 });
    done(
      await h.store.charges.importMemories(
        request(agentId, { cents: 5, operation: 'memory_import', claim: imported }),
        plan,
        RULES,
      ),
    );
    await expectKept(h.store, agentId, imported, at(0), { n: 1, credit_balance_cents: 10 });
    expect(await ledgerOf(h.store, agentId)).toHaveLength(1);
  });

  it('the ledger entry: id, time, operation, amount, balance after, cost, what it concerns, key, client; its seq', async () => {
    const agentId = await h.agent({ cents: 10 });
    await put(h, agentId, [item('k')]);
    const held = await claim(h.store, agentId, 'idem-ledger', 'memory_retrieve');
    done(
      await h.store.charges.retrieveMemory(
        request(agentId, {
          at: at(1),
          cents: 3,
          operation: 'memory_retrieve',
          entryId: 'txn_entry_one',
          ref: { memoryKey: 'k' },
          client: 'https://client.example/metadata.json',
          claim: held,
        }),
        'k',
        false,
      ),
    );
    done(
      await h.store.charges.charge(
        request(agentId, {
          at: at(2),
          cents: 2,
          operation: 'data',
          entryId: 'txn_entry_two',
          ref: { queryType: 'news', query: 'ünïcode "q"' },
        }),
        {},
      ),
    );
    const first: LedgerEntry = {
      id: 'txn_entry_one',
      agentId,
      at: at(1),
      operation: 'memory_retrieve',
      amountCents: -3,
      balanceAfterCents: 7,
      costCents: 3,
      memoryKey: 'k',
      idempotencyKey: 'idem-ledger',
      client: 'https://client.example/metadata.json',
    };
    const second: LedgerEntry = {
      id: 'txn_entry_two',
      agentId,
      at: at(2),
      operation: 'data',
      amountCents: -2,
      balanceAfterCents: 5,
      costCents: 2,
      queryType: 'news',
      query: 'ünïcode "q"',
    };
    const credit: LedgerEntry = {
      id: `txn_${agentId}_credit`,
      agentId,
      at: at(-86_400),
      operation: 'top_up',
      amountCents: 10,
      balanceAfterCents: 10,
    };
    expect(await ledgerOf(h.store, agentId)).toStrictEqual([second, first, credit]);
    // Seqs 1 (the credit), 2, 3: each page names where the next starts.
    expect(await newestSeq(h.store, agentId)).toBe(3);
    const page = await h.store.ledgerPage(agentId, { limit: 1, before: 3 });
    expect(page).toStrictEqual({ entries: [first], next: 2 });
    expect(await h.store.ledgerPage(agentId, { limit: 5, before: 2 })).toStrictEqual({ entries: [credit] });
  });

  it('the ledger entry on the unlimited plan: amount 0 and the plan, the cost recorded, the balance untouched', async () => {
    const agentId = await h.agent({ cents: 4, plan: 'unlimited' });
    const result = done(
      await h.store.charges.storeMemories(
        request(agentId, { at: at(1), cents: 25, entryId: 'txn_unlimited', ref: { memoryKey: 'k' } }),
        [item('k')],
        RULES,
      ),
    );
    expect(result.balanceCents).toBe(4);
    const [entry] = await ledgerOf(h.store, agentId);
    expect(entry).toStrictEqual({
      id: 'txn_unlimited',
      agentId,
      at: at(1),
      operation: 'memory_store',
      amountCents: 0,
      balanceAfterCents: 4,
      costCents: 25,
      plan: 'unlimited',
      memoryKey: 'k',
    });
    expect(await newestSeq(h.store, agentId)).toBe(2);
    expect(await h.store.read((r) => r.spentSince(agentId, at(0)))).toBe(25);
  });

  it("the record names the charge's operation, whatever the claim was taken under", async () => {
    // The core claims a key under the name it charges (operation-kit.ts), so the two never differ there.
    const agentId = await h.agent({ cents: 10 });
    const held = await claim(h.store, agentId, 'idem-named', 'claimed_name');
    expect(
      await h.store.charges.charge(
        request(agentId, { cents: 1, operation: 'memory_search', claim: held }),
        {},
      ),
    ).toStrictEqual({ balanceCents: 9 });
    const record = await h.store.read((r) => r.getIdempotency(agentId, 'idem-named'));
    expect(record?.operation).toBe('memory_search');
  });
});
