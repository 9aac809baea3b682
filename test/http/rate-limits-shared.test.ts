/**
 * Rate limits counted across instances: two real HTTP servers (each its own service, store and pool) on one
 * PostgreSQL database with AC_RATE_LIMIT on and small limits. Requests spread over both are refused after
 * the limit in total, not per instance, with Retry-After and the draft-8 headers; each limiter keeps its own
 * rows in rate_limits; and when the counters fail while the store works, requests go on uncounted
 * (passOnStoreError: fail open).
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase } from '../helpers/postgres.js';
import { type ApiResponse, startTestServer, type TestServer } from '../helpers/test-server.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Two instances on one fresh database, every limit high unless the test lowers it. */
async function twoInstances(
  env: Record<string, string>,
): Promise<{ url: string; a: TestServer; b: TestServer }> {
  const { url } = await testDatabase({ label: 'rate_shared' });
  const start = async () => {
    const server = await startTestServer({
      env: {
        DATABASE_URL: url,
        DATA_DIR: '',
        AC_RATE_LIMIT: 'on',
        AC_RATE_LIMIT_PER_KEY_PER_MINUTE: '1000',
        AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1000',
        AC_REGISTER_PER_HOUR_PER_ADDRESS: '1000',
        AC_REGISTER_PER_HOUR_PER_DOMAIN: '1000',
        AC_TRUST_PROXY: 'loopback',
        ...env,
      },
    });
    servers.push(server);
    return server;
  };
  return { url, a: await start(), b: await start() };
}

async function query(url: string, sql: string): Promise<any[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

function register(server: TestServer, email: string, from = '203.0.113.1'): Promise<ApiResponse> {
  return server.request('POST', '/api/ac/register', {
    body: { email },
    headers: { 'x-forwarded-for': from },
  });
}

function store(server: TestServer, key: string, memoryKey: string): Promise<ApiResponse> {
  return server.request('POST', '/api/ac/memory', {
    key,
    body: { agent_key: key, memory_key: memoryKey, memory_value: 'v' },
  });
}

function expectRateLimited(res: ApiResponse, policy: string, limit: number, windowS: number): void {
  expect(res.status).toBe(429);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowS);
  expect(res.body).toEqual({ error: expect.any(String), code: 'rate_limited', retry_after_s: retryAfter });
  expect(res.headers.get('ratelimit')).toMatch(new RegExp(`"${policy}"; r=0; t=\\d+`));
  expect(res.headers.get('ratelimit-policy')).toMatch(
    new RegExp(`"${policy}"; q=${limit}; w=${windowS}; pk=:[\\w+/=]+:`),
  );
}

describe('rate limits on PostgreSQL, across instances', () => {
  it('per key: 4 a minute in total over two instances, then 429 on both; another key is unaffected', async () => {
    const { a, b } = await twoInstances({ AC_RATE_LIMIT_PER_KEY_PER_MINUTE: '4' });
    const key = (await register(a, 'one@example.com')).body.agent_key as string;
    const other = (await register(b, 'two@example.com', '203.0.113.2')).body.agent_key as string;

    const answers = [await store(a, key, 'k1'), await store(b, key, 'k2'), await store(a, key, 'k3')];
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    // One count, whichever instance answers.
    expect(answers.map((r) => r.headers.get('ratelimit'))).toEqual([
      '"per-key"; r=3; t=60',
      '"per-key"; r=2; t=60',
      '"per-key"; r=1; t=60',
    ]);
    expect((await store(b, key, 'k4')).status).toBe(200);

    const limitedA = await store(a, key, 'k5');
    expectRateLimited(limitedA, 'per-key', 4, 60);
    expect(limitedA.body.error).toMatch(/^Too many requests for this API key \(at most 4 a minute\)/);
    expectRateLimited(await store(b, key, 'k6'), 'per-key', 4, 60);
    expectRateLimited(await a.request('GET', '/api/ac/account', { key }), 'per-key', 4, 60);

    // Four stores ran and were charged, on either instance; the refused ones did nothing.
    const account = await b.request('GET', '/api/ac/account', { key: other });
    expect(account.status).toBe(200);
    const { core } = a.running.service;
    const agent = await core.accounts.authenticate(key);
    expect(agent.balanceCents).toBe(46);
    expect(await a.running.service.store.read((r) => r.countMemories(agent.id))).toBe(4);
    expect((await store(a, other, 'x')).headers.get('ratelimit')).toBe('"per-key"; r=2; t=60');
  });

  it('without a key, per address across instances; registrations per domain across instances; one row per limiter and key', async () => {
    const { url, a, b } = await twoInstances({
      AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '3',
      AC_REGISTER_PER_HOUR_PER_DOMAIN: '2',
    });
    const from = { headers: { 'x-forwarded-for': '198.51.100.7' } };
    const statuses = [];
    for (const server of [a, b, a, b]) {
      statuses.push((await server.request('GET', '/api/ac/account', { key: 'ac_guess', ...from })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
    expectRateLimited(
      await a.request('GET', '/api/ac/account', { key: 'ac_guess', ...from }),
      'unauthenticated',
      3,
      60,
    );
    expect((await a.request('GET', '/api/ac/account', { key: 'ac_guess' })).status).toBe(401);

    expect((await register(a, 'x1@one.example', '203.0.113.11')).status).toBe(200);
    expect((await register(b, 'x2@one.example', '203.0.113.12')).status).toBe(200);
    expectRateLimited(await register(a, 'x3@one.example', '203.0.113.13'), 'register-per-domain', 2, 3600);
    expect((await register(b, 'x3@two.example', '203.0.113.13')).status).toBe(200);

    // Each limiter has its own prefix: the same address counts apart under `unauthenticated` and
    // `register-per-address`.
    const rows = await query(url, 'SELECT key, hits FROM rate_limits ORDER BY key');
    expect(rows).toEqual(
      expect.arrayContaining([
        { key: 'unauthenticated:address:198.51.100.7', hits: 5 },
        { key: 'unauthenticated:address:203.0.113.13', hits: 2 },
        { key: 'register-per-address:address:203.0.113.13', hits: 2 },
        { key: 'register-per-domain:domain:one.example', hits: 3 },
        { key: 'register-per-domain:domain:two.example', hits: 1 },
      ]),
    );
  });

  it('when the counters fail but the store works, requests go on uncounted (fail open)', async () => {
    const { url, a, b } = await twoInstances({ AC_RATE_LIMIT_PER_KEY_PER_MINUTE: '2' });
    const key = (await register(a, 'open@example.com')).body.agent_key as string;
    expect((await store(a, key, 'k1')).status).toBe(200);
    await query(url, 'ALTER TABLE rate_limits RENAME TO rate_limits_away');
    try {
      for (const server of [a, b, a]) {
        const res = await store(server, key, 'k');
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit')).toBeNull();
      }
    } finally {
      await query(url, 'ALTER TABLE rate_limits_away RENAME TO rate_limits');
    }
    expect((await store(b, key, 'k2')).status).toBe(200);
    expectRateLimited(await store(a, key, 'k3'), 'per-key', 2, 60);
  });
});
