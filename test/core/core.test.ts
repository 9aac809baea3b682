/**
 * The core driven directly, as the faces drive it (authenticate, `parseInput`, `runOperation` over the
 * operation table), over the in-memory store with a manual clock and a scripted live source: no HTTP, no files.
 */
import { describe, expect, it } from 'vitest';
import { coreHarness } from '../helpers/core-harness.js';

const MINUTE = 60_000;
const setup = coreHarness;

describe('core: accounts', () => {
  it('registers with the starter credit, refuses the same e-mail twice, authenticates only the key', async () => {
    const t = setup();
    const reg = await t.body('register', { email: 'a@example.test', name: 'A' });
    expect(reg).toMatchObject({ credit_balance_cents: 50, plan: 'pay-as-you-go', email: 'a@example.test' });
    expect((await t.failure(t.body('register', { email: 'a@example.test' }))).code).toBe('conflict');
    const account = await t.core.accounts.authenticate(reg.agent_key);
    expect(account.email).toBe('a@example.test');
    expect((await t.failure(t.core.accounts.authenticate('ac_wrong'))).code).toBe('unauthorized');
    expect((await t.failure(t.core.accounts.authenticate(undefined))).code).toBe('unauthorized');
    const { entries } = await t.ledger(account.id);
    expect(entries.map((e) => [e.operation, e.amountCents])).toEqual([['starter_credit', 50]]);
  });

  it('rotating the key invalidates the old one and keeps balance, ledger and memories', async () => {
    const t = setup();
    const { key, id } = await t.register();
    await t.body('memory_store', { memory_key: 'k', memory_value: 'v' }, key);
    const rotated = await t.body('account_rotate_key', {}, key);
    expect(rotated.agent_key).not.toBe(key);
    expect(rotated.credit_balance_cents).toBe(49);
    expect((await t.failure(t.core.accounts.authenticate(key))).code).toBe('unauthorized');
    expect((await t.core.accounts.authenticate(rotated.agent_key)).id).toBe(id);
    expect(
      (await t.body('memory_retrieve', { memory_key: 'k' }, rotated.agent_key)).memory.memory_value,
    ).toBe('v');
    await t.expectBalanced(id);
  });
});

describe('core: the ledger on the pay-as-you-go plan', () => {
  it('charges each paid operation, keeps balance = sum of amounts, and refuses with 402 before going negative', async () => {
    const t = setup();
    const { key, id } = await t.register();
    for (let i = 0; i < 50; i++)
      await t.body('memory_store', { memory_key: `k${i % 3}`, memory_value: 'v' }, key);
    expect((await t.body('account', {}, key)).credit_balance_cents).toBe(0);
    const err = await t.failure(t.body('memory_search', {}, key));
    expect(err.code).toBe('insufficient_credits');
    const { entries } = await t.ledger(id);
    expect(entries).toHaveLength(51);
    await t.expectBalanced(id);
  });

  it('a fresh data fetch costs 2 and is refused at a balance of 1, with nothing fetched or written', async () => {
    const t = setup();
    const { key, id } = await t.register();
    for (let i = 0; i < 49; i++) await t.body('memory_store', { memory_key: 'k', memory_value: 'v' }, key);
    const err = await t.failure(t.body('data', { query_type: 'news', query: 'rust' }, key));
    expect(err.code).toBe('insufficient_credits');
    expect(t.live.calls).toHaveLength(0);
    expect((await t.ledger(id)).entries).toHaveLength(50);
    await t.expectBalanced(id);
  });
});

describe('core: the ledger on the unlimited plan', () => {
  it('is never refused for credit, records the cost with amount 0, and plan changes are entries of 0', async () => {
    const t = setup();
    const { key, id } = await t.register();
    const set = await t.body('admin_plan', { email: 'a@example.test', plan: 'unlimited' });
    expect(set).toMatchObject({ plan: 'unlimited', previous_plan: 'pay-as-you-go', changed: true });
    expect((await t.body('admin_plan', { email: 'a@example.test', plan: 'unlimited' })).changed).toBe(false);
    for (let i = 0; i < 60; i++)
      await t.body('memory_store', { memory_key: 'k', memory_value: `v${i}` }, key);
    const { account, entries } = await t.ledger(id);
    expect(account?.balanceCents).toBe(50);
    const charges = entries.filter((e) => e.operation !== 'starter_credit' && e.operation !== 'plan_change');
    expect(charges).toHaveLength(60);
    for (const e of charges) expect([e.amountCents, e.costCents, e.plan]).toEqual([0, 1, 'unlimited']);
    expect(entries.filter((e) => e.operation === 'plan_change').map((e) => [e.amountCents, e.plan])).toEqual([
      [0, 'unlimited'],
    ]);
    await t.body('admin_plan', { email: 'a@example.test', plan: 'pay-as-you-go' });
    await t.body('memory_store', { memory_key: 'k', memory_value: 'x' }, key);
    expect((await t.body('account', {}, key)).credit_balance_cents).toBe(49);
    await t.expectBalanced(id);
  });
});

describe('core: daily spending limits', () => {
  it('pay-as-you-go: refused past the limit with nothing charged, allowed again after midnight UTC', async () => {
    const t = setup({ dailySpendCents: 3 }, '2026-11-21T23:58:00.000Z');
    const { key, id } = await t.register();
    for (let i = 0; i < 3; i++) await t.body('memory_store', { memory_key: 'k', memory_value: 'v' }, key);
    const err = await t.failure(t.body('memory_store', { memory_key: 'k', memory_value: 'v' }, key));
    expect(err.code).toBe('daily_limit_reached');
    expect(err.details).toMatchObject({
      daily_limit_cents: 3,
      spent_today_cents: 3,
      resets_at: '2026-11-22T00:00:00.000Z',
    });
    expect((await t.body('account', {}, key)).credit_balance_cents).toBe(47);
    t.clock.advance(3 * MINUTE);
    await t.body('memory_store', { memory_key: 'k', memory_value: 'v' }, key);
    expect((await t.body('account', {}, key)).credit_balance_cents).toBe(46);
    await t.expectBalanced(id);
  });

  it('unlimited: its own limit applies (not the pay-as-you-go one), counting recorded costs, reset at midnight UTC', async () => {
    const t = setup({ dailySpendCents: 1, unlimitedDailySpendCents: 4 }, '2026-11-21T23:00:00.000Z');
    const { key, id } = await t.register();
    await t.body('admin_plan', { email: 'a@example.test', plan: 'unlimited' });
    for (let i = 0; i < 4; i++) await t.body('memory_store', { memory_key: 'k', memory_value: 'v' }, key);
    const err = await t.failure(t.body('memory_store', { memory_key: 'k', memory_value: 'v' }, key));
    expect(err.code).toBe('daily_limit_reached');
    expect(err.details).toMatchObject({ daily_limit_cents: 4 });
    t.clock.advance(61 * MINUTE);
    await t.body('memory_store', { memory_key: 'k', memory_value: 'v' }, key);
    await t.expectBalanced(id);
  });
});

describe('core: memories', () => {
  it('an update keeps created_at and moves updated_at', async () => {
    const t = setup();
    const { key } = await t.register();
    await t.body('memory_store', { memory_key: 'k', memory_value: 'one' }, key);
    t.clock.advance(5 * MINUTE);
    await t.body('memory_store', { memory_key: 'k', memory_value: 'two' }, key);
    const { memory } = await t.body('memory_retrieve', { memory_key: 'k' }, key);
    expect(memory.memory_value).toBe('two');
    expect(memory.created_at).toBe('2026-11-21T12:00:00.000Z');
    expect(memory.updated_at).toBe('2026-11-21T12:05:00.000Z');
  });

  it('retrieving a missing key is 404 and free; another agent cannot see the memory', async () => {
    const t = setup();
    const a = await t.register('a@example.test');
    const b = await t.register('b@example.test');
    await t.body('memory_store', { memory_key: 'k', memory_value: 'v' }, a.key);
    const err = await t.failure(t.body('memory_retrieve', { memory_key: 'nope' }, a.key));
    expect(err.code).toBe('not_found');
    expect((await t.failure(t.body('memory_retrieve', { memory_key: 'k' }, b.key))).code).toBe('not_found');
    expect((await t.body('account', {}, a.key)).credit_balance_cents).toBe(49);
    expect((await t.body('account', {}, b.key)).credit_balance_cents).toBe(50);
  });

  it('the quota refuses a new key (not an update), with nothing charged', async () => {
    const t = setup({ memoriesPerAgent: 2 });
    const { key } = await t.register();
    await t.body('memory_store', { memory_key: 'a', memory_value: 'v' }, key);
    await t.body('memory_store', { memory_key: 'b', memory_value: 'v' }, key);
    expect((await t.failure(t.body('memory_store', { memory_key: 'c', memory_value: 'v' }, key))).code).toBe(
      'quota_exceeded',
    );
    await t.body('memory_store', { memory_key: 'a', memory_value: 'w' }, key);
    expect((await t.body('account', {}, key)).credit_balance_cents).toBe(47);
  });
});

describe('core: live data', () => {
  it('a fresh result is charged 2; a cached one within cache_minutes is free and not fetched again', async () => {
    const t = setup();
    const { key, id } = await t.register();
    const fresh = await t.body('data', { query_type: 'news', query: 'rust' }, key);
    expect(fresh).toMatchObject({ from_cache: false, cost_cents: 2, credit_balance_cents: 48 });
    t.clock.advance(5 * MINUTE);
    const cached = await t.body('data', { query_type: 'news', query: 'rust', cache_minutes: 10 }, key);
    expect(cached).toMatchObject({
      from_cache: true,
      cost_cents: 0,
      credit_balance_cents: 48,
      cache_age_s: 300,
    });
    expect(cached.data).toEqual(fresh.data);
    expect(t.live.calls).toHaveLength(1);
    t.clock.advance(6 * MINUTE);
    expect(
      (await t.body('data', { query_type: 'news', query: 'rust', cache_minutes: 10 }, key)).from_cache,
    ).toBe(false);
    expect(t.live.calls).toHaveLength(2);
    await t.expectBalanced(id);
  });

  it('cache_minutes 0 always fetches fresh and pays', async () => {
    const t = setup();
    const { key } = await t.register();
    await t.body('data', { query_type: 'price', query: 'btc' }, key);
    const again = await t.body('data', { query_type: 'price', query: 'btc', cache_minutes: 0 }, key);
    expect(again).toMatchObject({ from_cache: false, cost_cents: 2, credit_balance_cents: 46 });
    expect(t.live.calls).toHaveLength(2);
  });

  it('max_cost_cents below the fresh price refuses a fetch but accepts a cached result', async () => {
    const t = setup();
    const { key } = await t.register();
    const err = await t.failure(
      t.body('data', { query_type: 'weather', query: 'paris', max_cost_cents: 1 }, key),
    );
    expect(err.code).toBe('max_cost_exceeded');
    expect(t.live.calls).toHaveLength(0);
    expect((await t.body('account', {}, key)).credit_balance_cents).toBe(50);
    await t.body('data', { query_type: 'weather', query: 'paris' }, key);
    const cached = await t.body('data', { query_type: 'weather', query: 'paris', max_cost_cents: 0 }, key);
    expect(cached).toMatchObject({ from_cache: true, cost_cents: 0 });
  });

  it('an upstream failure charges nothing', async () => {
    const t = setup();
    const { key, id } = await t.register();
    t.live.failWith('upstream_failed');
    expect((await t.failure(t.body('data', { query_type: 'news', query: 'x' }, key))).code).toBe(
      'upstream_failed',
    );
    expect((await t.ledger(id)).entries).toHaveLength(1);
  });
});

describe('core: idempotency', () => {
  it('a repeated key replays the first answer without charging or storing again', async () => {
    const t = setup();
    const { key, id } = await t.register();
    const input = { memory_key: 'k', memory_value: 'v' };
    const first = await t.call('memory_store', input, key, 'idem-1');
    t.clock.advance(MINUTE);
    const second = await t.call('memory_store', input, key, 'idem-1');
    expect(first.replayed).toBe(false);
    expect(second.replayed).toBe(true);
    expect(second.body).toEqual(first.body);
    expect((await t.ledger(id)).entries).toHaveLength(2);
    expect((await t.body('account', {}, key)).credit_balance_cents).toBe(49);
    const third = await t.call('memory_store', input, key, 'idem-2');
    expect(third.replayed).toBe(false);
    expect((await t.body('account', {}, key)).credit_balance_cents).toBe(48);
  });
});
