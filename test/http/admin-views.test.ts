/**
 * The operator's views (AC_ADMIN_TOKEN): accounts page by page with balances and plans, and live-data health
 * (each provider's breaker, recent failures and token bucket; the cache's size and today's hit rate), with
 * the real providers against a fake upstream. Also ping's admin_api flag.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPortUrl, type FakeUpstream, startFakeUpstream } from '../fakes/fake-upstream.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const TOKEN = 'operator-token-for-tests-0123456789';

describe('operator views', () => {
  let server: TestServer;
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await startFakeUpstream({
      '/api/v1/search_by_date': {
        json: {
          hits: [
            {
              objectID: '46000001',
              story_id: 46000001,
              title: 'A story',
              url: 'https://e.example/a',
              author: 'someone',
              points: 10,
              num_comments: 0,
              created_at: '2026-11-20T10:00:00Z',
              created_at_i: 1795168800,
              _tags: ['story', 'story_46000001'],
            },
          ],
        },
      },
    });
    server = await startTestServer({
      env: {
        AC_ADMIN_TOKEN: TOKEN,
        AC_METRICS_TOKEN: TOKEN,
        AC_HN_ALGOLIA_URL: upstream.url,
        AC_COINGECKO_URL: await closedPortUrl(),
        AC_UPSTREAM_TIMEOUT_MS: '300',
        AC_NEWS_PROVIDERS: 'hn-algolia',
        AC_PRICE_PROVIDERS: 'coingecko',
      },
    });
  });
  afterAll(async () => {
    await server.close();
    await upstream.close();
  });

  const admin = (path: string, query: Record<string, string> = {}) =>
    server.request('GET', path, { bearer: TOKEN, query });

  it('lists accounts in e-mail order, page by page, filtered by e-mail, with the total', async () => {
    for (const name of ['carol', 'alice', 'bob']) await server.register(`${name}@views.example`);
    await server.register('someone@elsewhere.example');
    const first = await admin('/api/ac/admin/accounts', { limit: '2', email: 'VIEWS.example' });
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(3);
    expect(first.body.accounts.map((a: { email: string }) => a.email)).toEqual([
      'alice@views.example',
      'bob@views.example',
    ]);
    expect(first.body.accounts[0]).toEqual({
      email: 'alice@views.example',
      name: null,
      plan: 'pay-as-you-go',
      credit_balance_cents: 50,
      created_at: expect.any(String),
    });
    const second = await admin('/api/ac/admin/accounts', {
      limit: '2',
      email: 'views.example',
      cursor: first.body.next_cursor,
    });
    expect(second.body.accounts.map((a: { email: string }) => a.email)).toEqual(['carol@views.example']);
    expect(second.body.next_cursor).toBeNull();
    const everyone = await admin('/api/ac/admin/accounts', { email: 'example' });
    expect(everyone.body.total).toBe(4);
    // A top-up shows in the list.
    await server.request('POST', '/api/ac/admin/credits', {
      bearer: TOKEN,
      body: { email: 'bob@views.example', cents: 25 },
    });
    const bob = await admin('/api/ac/admin/accounts', { email: 'bob@' });
    expect(bob.body.accounts).toMatchObject([{ email: 'bob@views.example', credit_balance_cents: 75 }]);
  });

  it('pages past an account with the longest e-mail registration allows', async () => {
    const long = `longmail-a${'x'.repeat(54)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(50)}.example`;
    expect(long.length).toBeGreaterThan(250);
    await server.register(long);
    await server.register('longmail-b@views.example');
    const first = await admin('/api/ac/admin/accounts', { limit: '1', email: 'longmail-' });
    expect(first.body.accounts.map((a: { email: string }) => a.email)).toEqual([long]);
    const second = await admin('/api/ac/admin/accounts', {
      limit: '1',
      email: 'longmail-',
      cursor: first.body.next_cursor,
    });
    expect(second.status).toBe(200);
    expect(second.body.accounts.map((a: { email: string }) => a.email)).toEqual(['longmail-b@views.example']);
    expect(second.body.next_cursor).toBeNull();
  });

  it('refuses a wrong token, a bad limit and a cursor it did not give', async () => {
    const wrong = await server.request('GET', '/api/ac/admin/accounts', { bearer: 'nope' });
    expect(wrong.status).toBe(401);
    const agentKey = await server.register();
    expect((await server.request('GET', '/api/ac/admin/status', { key: agentKey })).status).toBe(401);
    expect((await admin('/api/ac/admin/accounts', { limit: '0' })).body).toMatchObject({ field: 'limit' });
    const bad = await admin('/api/ac/admin/accounts', { cursor: 'bogus' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_input', field: 'cursor' });
  });

  it("shows each provider's breaker, failures and bucket, and the cache's size and hit rate", async () => {
    const key = await server.register();
    const data = (body: Record<string, unknown>) =>
      server.request('POST', '/api/ac/data', { key, body: { agent_key: key, ...body } });
    expect((await data({ query_type: 'news', query: 'status check' })).status).toBe(200);
    expect((await data({ query_type: 'news', query: 'status check' })).body.cache_state).toBe('hit');
    const providers = async () => {
      const res = await admin('/api/ac/admin/status');
      expect(res.status).toBe(200);
      return Object.fromEntries(
        res.body.providers.map((p: { chain: string; id: string }) => [`${p.chain}/${p.id}`, p]),
      );
    };
    const afterNews = (await providers())['news/hn-algolia'];
    expect(afterNews).toMatchObject({ breaker: 'closed', recent_failures: [] });
    // (The exact level is the chain's unit test's: a real clock refills the bucket while this one reads.)
    expect(afterNews.tokens.available).toBeGreaterThan(0);
    expect(afterNews.tokens.available).toBeLessThanOrEqual(afterNews.tokens.capacity);
    expect((await data({ query_type: 'price', query: 'bitcoin' })).status).toBe(502);
    const coingecko = (await providers())['crypto price/coingecko'];
    expect(coingecko.recent_failures).toHaveLength(1);
    expect(coingecko.recent_failures[0]).toEqual({ at: expect.any(String), message: expect.any(String) });
    const res = await admin('/api/ac/admin/status');
    // The same figures in the metrics: upstream calls by provider and outcome, breakers, buckets.
    const metrics = (await server.request('GET', '/metrics', { bearer: TOKEN })).text;
    const sample = (line: string) => new RegExp(`^${line} (\\S+)$`, 'mu').exec(metrics)?.[1];
    expect(
      Number(sample('ac_upstream_calls_total\\{chain="news",provider="hn-algolia",outcome="ok"\\}')),
    ).toBe(1);
    expect(
      Number(
        sample('ac_upstream_calls_total\\{chain="crypto price",provider="coingecko",outcome="failed"\\}'),
      ),
    ).toBe(1);
    expect(sample('ac_provider_breaker_state\\{chain="news",provider="hn-algolia",state="closed"\\}')).toBe(
      '1',
    );
    expect(sample('ac_provider_breaker_state\\{chain="news",provider="hn-algolia",state="open"\\}')).toBe(
      '0',
    );
    expect(Number(sample('ac_provider_tokens\\{chain="news",provider="hn-algolia"\\}'))).toBeGreaterThan(0);
    expect(res.body.cache).toMatchObject({ entries: 1, hits: 1, misses: 1, hit_rate: 0.5 });
    expect(res.body.cache.day).toBe(new Date().toISOString().slice(0, 10));
  });

  it('ping says the operator endpoints are on', async () => {
    const ping = await server.request('GET', '/api/ac/ping');
    expect(ping.body.admin_api).toBe(true);
    expect(ping.body.agent_api.console).toEqual({ method: 'GET', path: '/console' });
    expect(ping.body.agent_api.api_reference).toEqual({ method: 'GET', path: '/docs' });
  });
});

describe('operator views without a token', () => {
  it('are absent (404), and ping says so', async () => {
    const server = await startTestServer();
    try {
      expect((await server.request('GET', '/api/ac/admin/accounts', { bearer: 'x' })).status).toBe(404);
      expect((await server.request('GET', '/api/ac/admin/status', { bearer: 'x' })).status).toBe(404);
      expect((await server.request('GET', '/api/ac/ping')).body.admin_api).toBe(false);
    } finally {
      await server.close();
    }
  });
});
