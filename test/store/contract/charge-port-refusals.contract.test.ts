/**
 * The store contract of the charge port, part 1: what refuses a charged operation, with exactly what each
 * refusal reports, and that a refusal writes nothing (balance, ledger and its seq, memories, history,
 * idempotency records). Run against the JSON file store and PostgreSQL (adapters.ts).
 */
import { expect, it } from 'vitest';
import type { ChargeRequest, StoreItem } from '../../../src/core/charge-port.js';
import { AppError } from '../../../src/core/errors.js';
import { storedAnswer } from '../../../src/core/memory-answers.js';
import {
  at,
  claim,
  contractSuite,
  done,
  expectKept,
  expectRefused,
  item,
  ledgerOf,
  memory,
  newestSeq,
  planner,
  put,
  RULES,
  remove,
  request,
  SINCE,
  stateOf,
} from './adapters.js';

contractSuite('charge port refusals', (h) => {
  /** The ledger operation of each charged operation of the port. */
  const NAMES = {
    retrieve: 'memory_retrieve',
    store: 'memory_store',
    batch: 'memory_store_batch',
    history: 'memory_history',
    restore: 'memory_restore',
    charge: 'memory_search',
    import: 'memory_import',
  } as const;

  /** Every charged operation of the port, as `cents` for the agent at T0 on the key `k` (k2, k3 absent). */
  const operations = (agentId: string, cents: number, fields: Partial<ChargeRequest> = {}) => {
    const charge = (name: keyof typeof NAMES) =>
      request(agentId, { cents, operation: NAMES[name], ref: { memoryKey: 'k' }, ...fields });
    return {
      retrieve: () => h.store.charges.retrieveMemory(charge('retrieve'), 'k', true),
      store: () => h.store.charges.storeMemories(charge('store'), [item('k', 'new')], RULES),
      batch: () => h.store.charges.storeMemories(charge('batch'), [item('k'), item('k2')], RULES),
      history: () => h.store.charges.memoryHistory(charge('history'), 'k', 10, RULES),
      restore: () => h.store.charges.restoreMemory(charge('restore'), { key: 'k', version: 1 }, RULES),
      charge: () => h.store.charges.charge(charge('charge'), { success: true, credit_balance_cents: 0 }),
      import: () =>
        h.store.charges.importMemories(
          charge('import'),
          planner(agentId, [{ key: 'k3', value: 'i', type: 'fact', metadata: {} }], cents, { success: true }),
          RULES,
        ),
    };
  };

  let claims = 0;

  /**
   * Each operation refused as `refusal`, nothing written; with `claimed`, each under an idempotency claim of its
   * own, which keeps no record.
   */
  async function refusedByEach(
    agentId: string,
    cents: number,
    fields: Partial<ChargeRequest>,
    refusal: object,
    claimed = true,
  ) {
    for (const name of Object.keys(NAMES) as (keyof typeof NAMES)[]) {
      const key = `idem-refused-${++claims}`;
      const held = claimed ? { claim: await claim(h.store, agentId, key, NAMES[name]) } : {};
      const run = operations(agentId, cents, { ...fields, ...held })[name];
      await expectRefused(h.store, agentId, ['k', 'k2', 'k3'], run, refusal, [key]).catch((err: unknown) => {
        throw new Error(`${name}: ${String(err)}`);
      });
      expect(await h.store.read((r) => r.getIdempotency(agentId, key))).toBeUndefined();
    }
  }

  it('insufficient_credits: each operation refused with the balance it saw, before its own refusals', async () => {
    const agentId = await h.agent({ cents: 5 });
    done(await h.store.charges.storeMemories(request(agentId, { cents: 3 }), [item('k')], RULES));
    await refusedByEach(agentId, 3, {}, { refused: 'insufficient_credits', balanceCents: 2 });
    // Checked before the operation's own refusals: an absent key, a failed condition.
    await expectRefused(
      h.store,
      agentId,
      ['absent'],
      () => h.store.charges.retrieveMemory(request(agentId, { cents: 3 }), 'absent', false),
      { refused: 'insufficient_credits', balanceCents: 2 },
    );
    await expectRefused(
      h.store,
      agentId,
      ['k'],
      () =>
        h.store.charges.storeMemories(
          request(agentId, { cents: 3 }),
          [item('k', 'v', { expectedVersion: 7 })],
          RULES,
        ),
      { refused: 'insufficient_credits', balanceCents: 2 },
    );
    // Exactly the balance is enough.
    expect(done(await operations(agentId, 2).retrieve()).balanceCents).toBe(0);
    expect(await newestSeq(h.store, agentId)).toBe(3);
  });

  it('daily_limit_reached: what the plan spent since `since`, against its own limit', async () => {
    const agentId = await h.agent({ cents: 100 });
    const daily = { payAsYouGo: 4, since: SINCE };
    // Yesterday's spending does not count.
    done(await h.store.charges.charge(request(agentId, { at: at(-86_400), cents: 5 }), {}));
    done(await h.store.charges.charge(request(agentId, { cents: 2, daily }), {}));
    await refusedByEach(
      agentId,
      3,
      { daily },
      { refused: 'daily_limit_reached', spentCents: 2, limitCents: 4 },
    );
    // Up to the limit exactly.
    expect(done(await h.store.charges.charge(request(agentId, { cents: 2, daily }), {})).balanceCents).toBe(
      91,
    );
    await expectRefused(
      h.store,
      agentId,
      [],
      () => h.store.charges.charge(request(agentId, { cents: 1, daily }), {}),
      { refused: 'daily_limit_reached', spentCents: 4, limitCents: 4 },
    );
    // A free charge is never refused; another plan's limit does not apply; counted from `since` only.
    done(await h.store.charges.charge(request(agentId, { cents: 0, daily }), {}));
    done(
      await h.store.charges.charge(request(agentId, { cents: 1, daily: { unlimited: 0, since: SINCE } }), {}),
    );
    done(await h.store.charges.charge(request(agentId, { cents: 4, daily: { ...daily, since: at(1) } }), {}));
    // The balance is checked first.
    const poor = await h.agent({ cents: 1 });
    done(await h.store.charges.charge(request(poor, { cents: 1 }), {}));
    await expectRefused(
      h.store,
      poor,
      [],
      () => h.store.charges.charge(request(poor, { cents: 1, daily: { payAsYouGo: 0, since: SINCE } }), {}),
      { refused: 'insufficient_credits', balanceCents: 0 },
    );
    expect((await ledgerOf(h.store, agentId)).map((e) => e.amountCents)).toEqual([-4, -1, -2, -2, -5, 100]);
  });

  it('the unlimited plan: never refused for credit, refused past its own daily limit', async () => {
    const agentId = await h.agent({ cents: 10, plan: 'unlimited' });
    const payg = { payAsYouGo: 1, since: SINCE };
    expect(
      done(await h.store.charges.charge(request(agentId, { cents: 50, daily: payg }), {})).balanceCents,
    ).toBe(10);
    const daily = { unlimited: 60, since: SINCE };
    await refusedByEach(
      agentId,
      11,
      { daily },
      { refused: 'daily_limit_reached', spentCents: 50, limitCents: 60 },
    );
    expect(done(await operations(agentId, 10, { daily }).store()).balanceCents).toBe(10);
    await expectRefused(h.store, agentId, ['k'], () => operations(agentId, 1, { daily }).retrieve(), {
      refused: 'daily_limit_reached',
      spentCents: 60,
      limitCents: 60,
    });
    expect(done(await operations(agentId, 1000).retrieve()).balanceCents).toBe(10);
  });

  it('not_found: an absent or expired key retrieved, the history of an unknown or retired key', async () => {
    const agentId = await h.agent();
    await put(h, agentId, [item('short', 'v', { expiresAt: at(10), ttlSeconds: 10 }), item('gone')]);
    await remove(h, agentId, 'gone', at(0));
    const keys = ['absent', 'short', 'gone'];
    const notFound = { refused: 'not_found' };
    const retrieve =
      (key: string, when: string, refresh = false, fields: Partial<ChargeRequest> = {}) =>
      () =>
        h.store.charges.retrieveMemory(
          request(agentId, { at: when, operation: 'memory_retrieve', ...fields }),
          key,
          refresh,
        );
    await expectRefused(h.store, agentId, keys, retrieve('absent', at(0)), notFound);
    // Under a claim: no record kept.
    const held = await claim(h.store, agentId, 'idem-absent', 'memory_retrieve');
    const claimed = retrieve('absent', at(0), false, { claim: held });
    await expectRefused(h.store, agentId, keys, claimed, notFound, ['idem-absent']);
    await expectRefused(h.store, agentId, keys, retrieve('gone', at(0)), notFound);
    // Expired at its instant exactly, refreshed or not.
    await expectRefused(h.store, agentId, keys, retrieve('short', at(10)), notFound);
    await expectRefused(h.store, agentId, keys, retrieve('short', at(10), true), notFound);
    const history = (key: string, when: string) => () =>
      h.store.charges.memoryHistory(
        request(agentId, { at: when, operation: 'memory_history' }),
        key,
        10,
        RULES,
      );
    await expectRefused(h.store, agentId, keys, history('absent', at(0)), notFound);
    // A deleted key's history is kept for its retention (3600 s after its newest entry), then gone.
    expect(done(await history('gone', at(3600))()).versions.map((v) => v.version)).toEqual([2, 1]);
    await expectRefused(h.store, agentId, keys, history('gone', at(3601)), notFound);
    // With no history kept, a key without a live memory has none.
    await expectRefused(
      h.store,
      agentId,
      keys,
      () => h.store.charges.memoryHistory(request(agentId), 'gone', 10, { ...RULES, keep: 0 }),
      notFound,
    );
  });

  it('version_conflict: a store or restore whose condition fails reports the key and its live version', async () => {
    const agentId = await h.agent();
    await put(h, agentId, [item('k')]);
    await put(h, agentId, [item('k', 'two')]);
    await put(h, agentId, [item('short', 'v', { expiresAt: at(5), ttlSeconds: 5 })]);
    await put(h, agentId, [item('gone')]);
    await remove(h, agentId, 'gone', at(0));
    const keys = ['k', 'short', 'gone', 'new'];
    const store =
      (items: StoreItem[], when = at(0), fields: Partial<ChargeRequest> = {}) =>
      () =>
        h.store.charges.storeMemories(request(agentId, { at: when, ...fields }), items, RULES);
    const conflict = (key: string, currentVersion: number | null) => ({
      refused: 'version_conflict',
      key,
      currentVersion,
    });
    await expectRefused(
      h.store,
      agentId,
      keys,
      store([item('k', 'x', { expectedVersion: 1 })]),
      conflict('k', 2),
    );
    await expectRefused(
      h.store,
      agentId,
      keys,
      store([item('k', 'x', { createOnly: true })]),
      conflict('k', 2),
    );
    await expectRefused(
      h.store,
      agentId,
      keys,
      store([item('new', 'x', { expectedVersion: 1 })]),
      conflict('new', null),
    );
    // An expired memory, a deleted one, is absent to a condition.
    await expectRefused(
      h.store,
      agentId,
      keys,
      store([item('short', 'x', { expectedVersion: 1 })], at(5)),
      conflict('short', null),
    );
    await expectRefused(
      h.store,
      agentId,
      keys,
      store([item('gone', 'x', { expectedVersion: 1 })]),
      conflict('gone', null),
    );
    // A later item of a batch: its own key, and nothing of the items before it is kept (a claim neither).
    const held = await claim(h.store, agentId, 'idem-batch', 'memory_store_batch');
    await expectRefused(
      h.store,
      agentId,
      keys,
      store(
        [item('new', 'x'), item('k', 'y', { expectedVersion: 2 }), item('k', 'z', { expectedVersion: 2 })],
        at(0),
        { operation: 'memory_store_batch', claim: held },
      ),
      conflict('k', 3),
      ['idem-batch'],
    );
    const restore = (key: string, expectedVersion: number) => () =>
      h.store.charges.restoreMemory(
        request(agentId, { operation: 'memory_restore' }),
        { key, version: 1, expectedVersion },
        RULES,
      );
    await expectRefused(h.store, agentId, keys, restore('k', 1), conflict('k', 2));
    await expectRefused(h.store, agentId, keys, restore('gone', 1), conflict('gone', null));
    // Met conditions go ahead.
    const ok = done(
      await h.store.charges.storeMemories(
        request(agentId, { at: at(5) }),
        [item('k', 'x', { expectedVersion: 2 }), item('short', 'y', { createOnly: true })],
        RULES,
      ),
    );
    expect(ok.results.map((r) => [r.memory.key, r.memory.version, r.created])).toEqual([
      ['k', 3, false],
      ['short', 2, true],
    ]);
  });

  it('quota_exceeded: a memory created past the quota; an update at the quota goes ahead', async () => {
    const agentId = await h.agent();
    const rules = { ...RULES, quota: 2 };
    await put(h, agentId, [item('a'), item('d')], at(0), rules);
    await remove(h, agentId, 'd', at(0));
    await put(h, agentId, [item('b', 'v', { expiresAt: at(10), ttlSeconds: 10 })], at(0), rules);
    const keys = ['a', 'b', 'c', 'd'];
    const quota = { refused: 'quota_exceeded' };
    const store =
      (items: StoreItem[], when = at(0)) =>
      () =>
        h.store.charges.storeMemories(request(agentId, { at: when }), items, rules);
    await expectRefused(h.store, agentId, keys, store([item('c')]), quota);
    await expectRefused(h.store, agentId, keys, store([item('a', 'two'), item('c')]), quota);
    await expectRefused(
      h.store,
      agentId,
      keys,
      () =>
        h.store.charges.restoreMemory(
          request(agentId, { operation: 'memory_restore' }),
          { key: 'd', version: 1 },
          rules,
        ),
      quota,
    );
    const updated = done(await store([item('a', 'two')])());
    expect(updated.results.map((r) => [r.memory.version, r.created])).toEqual([[2, false]]);
    // An expired memory does not count.
    const created = done(await store([item('c')], at(10))());
    expect(created.results.map((r) => [r.memory.version, r.created])).toEqual([[1, true]]);
    expect(await h.store.read((r) => r.countMemories(agentId, at(10)))).toBe(2);
  });

  it('version_not_found and version_deleted: a restore of what the history does not hold, or of a delete', async () => {
    const agentId = await h.agent();
    const rules = { ...RULES, keep: 2 };
    for (const value of ['one', 'two', 'three']) await put(h, agentId, [item('k', value)], at(0), rules);
    await put(h, agentId, [item('d')], at(0), rules);
    await remove(h, agentId, 'd', at(0), rules.keep);
    const keys = ['k', 'd', 'absent'];
    const restore =
      (key: string, number: number, changed = rules, when = at(0), fields: Partial<ChargeRequest> = {}) =>
      () =>
        h.store.charges.restoreMemory(
          request(agentId, { at: when, operation: 'memory_restore', ...fields }),
          { key, version: number },
          changed,
        );
    const notFound = { refused: 'version_not_found' };
    await expectRefused(h.store, agentId, keys, restore('k', 9), notFound);
    // Kept: the newest 2 (3 and 2); version 1 is gone.
    await expectRefused(h.store, agentId, keys, restore('k', 1), notFound);
    await expectRefused(h.store, agentId, keys, restore('absent', 1), notFound);
    // No history kept: none to restore.
    await expectRefused(h.store, agentId, keys, restore('k', 3, { ...rules, keep: 0 }), notFound);
    // Past the deleted key's retention.
    await expectRefused(h.store, agentId, keys, restore('d', 1, rules, at(3601)), notFound);
    await expectRefused(h.store, agentId, keys, restore('d', 2), { refused: 'version_deleted' });
    const held = await claim(h.store, agentId, 'idem-deleted', 'memory_restore');
    const claimed = restore('d', 2, rules, at(0), { claim: held });
    await expectRefused(h.store, agentId, keys, claimed, { refused: 'version_deleted' }, ['idem-deleted']);
  });

  it('unauthorized: every operation of an agent without an account', async () => {
    const nobody = 'agent_without_account';
    await refusedByEach(nobody, 1, {}, { refused: 'unauthorized' }, false);
    // Even free.
    await expectRefused(h.store, nobody, [], operations(nobody, 0).charge, { refused: 'unauthorized' });
  });

  it('a refused expiry fails the store when its item is reached, after the refusals before it', async () => {
    const agentId = await h.agent();
    await put(h, agentId, [item('k')]);
    const invalid = new AppError('invalid_input', 'expires_at must be in the future', {
      field: 'expires_at',
    });
    const refused = (key: string, fields: Partial<StoreItem> = {}) =>
      item(key, 'x', { refusedExpiry: invalid, ...fields });
    const keys = ['k', 'n'];
    const store =
      (items: StoreItem[], rules = RULES) =>
      () =>
        h.store.charges.storeMemories(request(agentId), items, rules);
    // Item 1's condition refused first.
    await expectRefused(
      h.store,
      agentId,
      keys,
      store([item('k', 'y', { expectedVersion: 5 }), refused('n')]),
      { refused: 'version_conflict', key: 'k', currentVersion: 1 },
    );
    // The item's own condition before its expiry.
    await expectRefused(h.store, agentId, keys, store([refused('k', { createOnly: true })]), {
      refused: 'version_conflict',
      key: 'k',
      currentVersion: 1,
    });
    // Item 1 past the quota before item 2's expiry.
    await expectRefused(h.store, agentId, keys, store([item('n'), refused('k')], { ...RULES, quota: 1 }), {
      refused: 'quota_exceeded',
    });
    // Reached: the error itself, and nothing written (item 1's write undone).
    const before = await stateOf(h.store, agentId, keys);
    await expect(store([item('k', 'y'), refused('n')])()).rejects.toBe(invalid);
    // Its expiry before the quota of the item itself.
    await expect(store([refused('n')], { ...RULES, quota: 1 })()).rejects.toBe(invalid);
    expect(await stateOf(h.store, agentId, keys)).toStrictEqual(before);
  });

  it('a claim that is not the current one: PostgreSQL fails idempotency_in_progress; the JSON store does not check', async () => {
    const agentId = await h.agent({ cents: 10 });
    const held = await claim(h.store, agentId, 'idem-lost', 'memory_store');
    const lost = { ...held, token: 'a-token-that-is-not-the-claim' };
    const run = () =>
      h.store.charges.storeMemories(
        request(agentId, { at: at(1), cents: 2, claim: lost }),
        [item('k')],
        RULES,
      );
    if (h.kind === 'postgres') {
      const before = await stateOf(h.store, agentId, ['k'], ['idem-lost']);
      const failure = await run().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(AppError);
      expect((failure as AppError).code).toBe('idempotency_in_progress');
      expect(await stateOf(h.store, agentId, ['k'], ['idem-lost'])).toStrictEqual(before);
      return;
    }
    // The JSON store's claims live in its one process and never expire (store/json/json-store.ts): it takes the token
    // on trust (JsonTx.putIdempotency ignores it), charges and keeps the answer.
    const written = memory(agentId, 'k', { createdAt: at(1), updatedAt: at(1) });
    expect(await run()).toStrictEqual({ results: [{ memory: written, created: true }], balanceCents: 8 });
    await expectKept(h.store, agentId, lost, at(1), storedAnswer(written, true, 2, 8));
  });
});
