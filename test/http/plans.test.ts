/**
 * Plans: pay-as-you-go (the spec's) and unlimited (never refused for credit). On both, every charge reports
 * its cost and leaves a ledger entry, and the balance equals the sum of the ledger's amounts. The operator
 * moves accounts between plans through the admin route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ledgerSum, ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

const ADMIN = 'admin-token-for-plans-0123';

/** The whole ledger of the key's account, read from the store, and the account's balance. */
async function wholeLedger(server: TestServer, key: string) {
  const { core, store } = server.running.service;
  const account = await core.accounts.authenticate(key);
  const entries = await store.read((reader) => reader.listLedger(account.id, 1_000_000));
  return {
    balance: account.balanceCents,
    sum: entries.reduce((total, e) => total + e.amountCents, 0),
    entries,
  };
}

describe('plans', () => {
  let server: TestServer;
  let limited: TestServer;
  const live = new FakeLiveSource();
  const clock = new ManualClock(Date.parse('2026-11-21T12:00:00.000Z'));

  beforeAll(async () => {
    server = await startTestServer({ live, clock, env: { AC_ADMIN_TOKEN: ADMIN } });
    limited = await startTestServer({
      live,
      clock,
      env: {
        AC_ADMIN_TOKEN: ADMIN,
        AC_DAILY_SPEND_LIMIT_CENTS: '30',
        AC_UNLIMITED_DAILY_SPEND_LIMIT_CENTS: '200',
      },
    });
  });
  afterAll(async () => {
    await server.close();
    await limited.close();
  });

  const setPlan = (email: string, plan: string, token = ADMIN, on = server) =>
    on.request('POST', '/api/ac/admin/plan', { bearer: token, body: { email, plan } });
  const store = (key: string, memoryKey: string, on = server) =>
    on.request('POST', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: memoryKey, memory_value: 'v' },
    });
  const data = (key: string, query: string, on = server) =>
    on.request('POST', '/api/ac/data', { key, body: { agent_key: key, query_type: 'news', query } });

  it('an unlimited account is never refused for credit, and every charge is recorded with its cost', async () => {
    const email = 'unlimited@example.com';
    const key = await server.register(email);
    // Spend the starter credit on the pay-as-you-go plan until the 402.
    for (let i = 0; i < 25; i++) expect((await data(key, `q${i}`)).status).toBe(200);
    expect((await store(key, 'refused')).status).toBe(402);

    const moved = await setPlan(email, 'unlimited');
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toEqual({
      success: true,
      email,
      plan: 'unlimited',
      previous_plan: 'pay-as-you-go',
      changed: true,
      credit_balance_cents: 0,
    });

    const stored = await store(key, 'k');
    expect(stored.status, stored.text).toBe(200);
    expect(stored.body).toMatchObject({ cost_cents: 1, credit_balance_cents: 0 });
    const fetched = await data(key, 'fresh');
    expect(fetched.body).toMatchObject({ from_cache: false, cost_cents: 2, credit_balance_cents: 0 });
    const cached = await data(key, 'fresh');
    expect(cached.body).toMatchObject({ from_cache: true, cost_cents: 0 });

    const ledger = await server.request('GET', '/api/ac/account/transactions', {
      key,
      query: { limit: '3' },
    });
    expect(ledger.body.transactions).toMatchObject([
      { operation: 'data', amount_cents: 0, cost_cents: 2, plan: 'unlimited', balance_after_cents: 0 },
      { operation: 'memory_store', amount_cents: 0, cost_cents: 1, plan: 'unlimited', memory_key: 'k' },
      { operation: 'plan_change', amount_cents: 0, plan: 'unlimited', balance_after_cents: 0 },
    ]);
    expect(ledger.body.transactions[2]).not.toHaveProperty('cost_cents');
    expect(await ledgerSum(server, key)).toBe(0);
    const whole = await wholeLedger(server, key);
    expect(whole).toMatchObject({ balance: 0, sum: 0 });
    const account = await server.request('GET', '/api/ac/account', { key });
    expect(account.body).toMatchObject({ plan: 'unlimited', credit_balance_cents: 0 });

    // Back on pay-as-you-go, the 402 is the same as before.
    expect((await setPlan(email, 'pay-as-you-go')).body).toMatchObject({
      plan: 'pay-as-you-go',
      changed: true,
    });
    const refused = await store(key, 'again');
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({
      code: 'insufficient_credits',
      required_cents: 1,
      credit_balance_cents: 0,
    });
  });

  it('the pay-as-you-go daily limit does not hold an unlimited account; its own limit does', async () => {
    const email = 'limits@example.com';
    const key = await limited.register(email);
    await limited.request('POST', '/api/ac/admin/credits', { bearer: ADMIN, body: { email, cents: 1000 } });
    for (let i = 0; i < 30; i++) expect((await store(key, `a${i}`, limited)).status).toBe(200);
    const held = await store(key, 'a30', limited);
    expect(held.body).toMatchObject({ code: 'daily_limit_reached', daily_limit_cents: 30 });

    await setPlan(email, 'unlimited', ADMIN, limited);
    // Costs on the unlimited plan count against its own limit: 30 spent so far today.
    for (let i = 30; i < 200; i++) expect((await store(key, `a${i}`, limited)).status).toBe(200);
    const stopped = await store(key, 'a200', limited);
    expect(stopped.status).toBe(402);
    expect(stopped.body).toMatchObject({
      code: 'daily_limit_reached',
      daily_limit_cents: 200,
      spent_today_cents: 200,
    });
    expect((await data(key, 'over', limited)).body.code).toBe('daily_limit_reached');
    const whole = await wholeLedger(limited, key);
    expect(whole.balance).toBe(50 + 1000 - 30);
    expect(whole.sum).toBe(whole.balance);
    expect(whole.entries.filter((e) => e.costCents === 1 && e.amountCents === 0)).toHaveLength(170);
    clock.advance(24 * 3600_000);
    expect((await store(key, 'next-day', limited)).status).toBe(200);
  });

  it('answers an unknown e-mail, a bad plan, an unchanged plan and a wrong token as the admin route should', async () => {
    const missing = await setPlan('nobody@example.com', 'unlimited');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toContain('No account is registered with nobody@example.com');
    const email = 'plain@example.com';
    await server.register(email);
    const bad = await setPlan(email, 'gold');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_input', field: 'plan' });
    const same = await setPlan(email, 'pay-as-you-go');
    expect(same.body).toMatchObject({
      changed: false,
      plan: 'pay-as-you-go',
      previous_plan: 'pay-as-you-go',
    });
    const wrong = await setPlan(email, 'unlimited', 'not-the-admin-token-000');
    expect(wrong.status).toBe(401);
    const key = await server.register('plain2@example.com');
    const asAgent = await server.request('POST', '/api/ac/admin/plan', {
      bearer: key,
      body: { email: 'plain2@example.com', plan: 'unlimited' },
    });
    expect(asAgent.status).toBe(401);
    expect((await server.request('GET', '/api/ac/account', { key })).body.plan).toBe('pay-as-you-go');
  });
});
