/**
 * Rate and registration limits against the real server over HTTP, with small limits so that a few requests
 * reach them. Windows are a minute or an hour from a client's first request, so no test depends on timing.
 * Different client addresses come from X-Forwarded-For with AC_TRUST_PROXY=loopback (the test client is on
 * loopback, so it is the trusted proxy). Balances and ledgers are read from the core, not over HTTP, where
 * the reading itself would be limited.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DOCUMENTS } from '../../src/http/discovery.js';
import { type ApiResponse, startTestServer, type TestServer } from '../helpers/test-server.js';
import { initializeRequest } from '../mcp/mcp-harness.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server with rate limits on; every limit high unless the test lowers it. */
async function limitedServer(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer({
    env: {
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
}

async function accountOf(server: TestServer, key: string) {
  const { core } = server.running.service;
  const account = await core.accounts.authenticate(key);
  const ledger = await core.accounts.transactions(account.id, { limit: 100 });
  return { balance: account.balanceCents, entries: ledger.transactions.length };
}

function register(server: TestServer, email: string, from?: string): Promise<ApiResponse> {
  return server.request('POST', '/api/ac/register', {
    body: { email },
    ...(from ? { headers: { 'x-forwarded-for': from } } : {}),
  });
}

async function keyFor(server: TestServer, email: string): Promise<string> {
  const res = await register(server, email);
  expect(res.status).toBe(200);
  return res.body.agent_key as string;
}

function store(server: TestServer, key: string, memoryKey: string): Promise<ApiResponse> {
  return server.request('POST', '/api/ac/memory', {
    key,
    body: { agent_key: key, memory_key: memoryKey, memory_value: 'v' },
  });
}

/**
 * Checks the shape of every 429: status, Retry-After, draft-8 headers, the one JSON error body (on /mcp,
 * the `data` of a JSON-RPC error).
 */
function expectRateLimited(res: ApiResponse, policy: string, windowS: number, jsonRpc = false): void {
  expect(res.status).toBe(429);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowS);
  const body = jsonRpc ? res.body.error.data : res.body;
  if (jsonRpc) expect(res.body).toMatchObject({ jsonrpc: '2.0', error: { message: body.error }, id: null });
  expect(body).toEqual({ error: expect.any(String), code: 'rate_limited', retry_after_s: retryAfter });
  expect(body.error).toContain(`retry in ${retryAfter} s`);
  expect(res.headers.get('ratelimit')).toContain(`"${policy}"; r=0; t=`);
  expect(res.headers.get('ratelimit-policy')).toMatch(new RegExp(`"${policy}"; q=\\d+; w=${windowS}; pk=`));
  expect(res.headers.get('x-ratelimit-limit')).toBeNull(); // legacy headers off
}

describe('API limit per key', () => {
  it('the 4th call in a minute with a limit of 3 is a 429 that runs and charges nothing; another key is unaffected', async () => {
    const server = await limitedServer({ AC_RATE_LIMIT_PER_KEY_PER_MINUTE: '3' });
    const a = await keyFor(server, 'a@example.com');
    const b = await keyFor(server, 'b@example.com');

    const first = await store(server, a, 'k1');
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit')).toBe('"per-key"; r=2; t=60');
    expect(first.headers.get('ratelimit-policy')).toMatch(/^"per-key"; q=3; w=60; pk=:[\w+/=]+:$/);
    expect((await store(server, a, 'k2')).status).toBe(200);
    expect((await store(server, a, 'k3')).status).toBe(200);
    const before = await accountOf(server, a);
    expect(before).toEqual({ balance: 47, entries: 4 });

    const limited = await store(server, a, 'k4');
    expectRateLimited(limited, 'per-key', 60);
    expect(limited.body.error).toMatch(/^Too many requests for this API key \(at most 3 a minute\)/);
    expect(await accountOf(server, a)).toEqual(before);
    // The same account through the other header is the same bucket; free routes are limited too.
    expectRateLimited(await server.request('GET', '/api/ac/account', { bearer: a }), 'per-key', 60);

    const other = await store(server, b, 'k1');
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit')).toBe('"per-key"; r=2; t=60');
    expect(await accountOf(server, b)).toEqual({ balance: 49, entries: 2 });
    const { core, store: db } = server.running.service;
    const agentA = await core.accounts.authenticate(a);
    expect(await db.read((r) => r.listMemories(agentA.id, { limit: 100 }))).toHaveLength(3);
  });

  it('does not limit ping, the discovery documents, readiness or OPTIONS', async () => {
    const server = await limitedServer({ AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '2' });
    const paths = DOCUMENTS.map((doc) => doc.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/ac/ping',
        '/api/ac/openapi.json',
        '/api/ac/llms.txt',
        '/.well-known/ai-plugin.json',
      ]),
    );
    for (let i = 0; i < 5; i++) {
      for (const path of paths) {
        const res = await server.request('GET', path, { key: 'ac_not-a-key' });
        expect(res.status, path).toBe(200);
        expect(res.headers.get('ratelimit'), path).toBeNull();
      }
      expect((await server.request('OPTIONS', '/api/ac/memory')).status).toBe(204);
    }
    const counted = await server.request('GET', '/api/ac/account');
    expect(counted.status).toBe(401);
    expect(counted.headers.get('ratelimit')).toBe('"unauthenticated"; r=1; t=60');
  });
});

describe('API limit without a valid key, per client address', () => {
  it('counts missing and unknown keys per address; a valid key and another address are unaffected', async () => {
    const server = await limitedServer({ AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '3' });
    const key = server.running.service.core.accounts.register({ email: 'valid@example.com' });
    const valid = (await key).agent_key;

    expect((await server.request('GET', '/api/ac/account', { key: 'ac_guess1' })).status).toBe(401);
    expect((await server.request('GET', '/api/ac/account', { key: 'ac_guess2' })).status).toBe(401);
    const third = await server.request('GET', '/api/ac/account');
    expect(third.status).toBe(401);
    expect(third.headers.get('ratelimit')).toBe('"unauthenticated"; r=0; t=60');

    const limited = await server.request('GET', '/api/ac/account', { key: 'ac_guess3' });
    expectRateLimited(limited, 'unauthenticated', 60);
    expect(limited.body.error).toMatch(/without a valid API key from this address \(at most 3 a minute\)/);
    expectRateLimited(await server.request('GET', '/api/ac/nowhere'), 'unauthenticated', 60);

    const withKey = await server.request('GET', '/api/ac/account', { key: valid });
    expect(withKey.status).toBe(200);
    expect(withKey.headers.get('ratelimit')).toContain('"per-key"');
    const elsewhere = await server.request('GET', '/api/ac/account', {
      key: 'ac_guess4',
      headers: { 'x-forwarded-for': '203.0.113.7' },
    });
    expect(elsewhere.status).toBe(401);
  });

  it('without AC_TRUST_PROXY, X-Forwarded-For is ignored: a client cannot pick a new address per request', async () => {
    const server = await limitedServer({ AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '2', AC_TRUST_PROXY: '' });
    const statuses: number[] = [];
    for (const ip of ['198.51.100.1', '198.51.100.2', '198.51.100.3']) {
      statuses.push(
        (await server.request('GET', '/api/ac/account', { headers: { 'x-forwarded-for': ip } })).status,
      );
    }
    expect(statuses).toEqual([401, 401, 429]);
  });
});

describe('registration limits', () => {
  it('per address per hour: 409 counts, 400 does not, another address is unaffected', async () => {
    const server = await limitedServer({ AC_REGISTER_PER_HOUR_PER_ADDRESS: '2' });
    for (let i = 0; i < 4; i++) expect((await register(server, 'not-an-address')).status).toBe(400);
    expect((await register(server, 'one@example.com')).status).toBe(200);
    expect((await register(server, 'one@example.com')).status).toBe(409);

    const limited = await register(server, 'two@example.com');
    expectRateLimited(limited, 'register-per-address', 3600);
    expect(limited.body.error).toMatch(/^Too many registrations from this address \(at most 2 an hour\)/);
    expect(limited.headers.get('ratelimit')).toContain('"unauthenticated"; r=');
    // Nothing was created: the address is still free for a client elsewhere.
    expect((await register(server, 'two@example.com', '203.0.113.9')).status).toBe(200);
    expect((await register(server, 'three@example.com', '203.0.113.10')).status).toBe(200);
  });

  it('per e-mail domain per hour, whatever the address and the case of the domain', async () => {
    const server = await limitedServer({ AC_REGISTER_PER_HOUR_PER_DOMAIN: '2' });
    expect((await register(server, 'x1@one.example', '203.0.113.1')).status).toBe(200);
    expect((await register(server, 'x2@one.example', '203.0.113.2')).status).toBe(200);
    const limited = await register(server, 'x3@ONE.Example', '203.0.113.3');
    expectRateLimited(limited, 'register-per-domain', 3600);
    expect(limited.body.error).toMatch(
      /^Too many registrations for addresses at one\.example \(at most 2 an hour\)/,
    );
    expect((await register(server, 'x3@two.example', '203.0.113.3')).status).toBe(200);
  });

  it('register also counts under the per-minute limit of unauthenticated requests', async () => {
    const server = await limitedServer({ AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '2' });
    expect((await register(server, 'm1@example.com')).status).toBe(200);
    expect((await register(server, 'bad')).status).toBe(400);
    expectRateLimited(await register(server, 'm2@example.com'), 'unauthenticated', 60);
  });

  it('AC_RATE_LIMIT=off lets 200 registrations from one address at one domain through, and sends no headers', async () => {
    const server = await startTestServer({
      env: {
        AC_RATE_LIMIT: 'off',
        AC_REGISTER_PER_HOUR_PER_ADDRESS: '1',
        AC_REGISTER_PER_HOUR_PER_DOMAIN: '1',
      },
    });
    servers.push(server);
    for (let i = 0; i < 200; i++) {
      const res = await register(server, `bulk${i}@example.com`);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBeNull();
    }
    const guesses = await Promise.all(
      Array.from({ length: 100 }, (_, i) => server.request('GET', '/api/ac/account', { key: `ac_${i}` })),
    );
    expect(new Set(guesses.map((r) => r.status))).toEqual(new Set([401]));
  });
});

describe('MCP over HTTP is under the same limits', () => {
  const INIT = initializeRequest('rate-test');
  const ACCEPT = { accept: 'application/json, text/event-stream' };

  it('a keyed MCP client shares the per-key bucket with REST; the limited tool call charges nothing', async () => {
    const server = await limitedServer({ AC_RATE_LIMIT_PER_KEY_PER_MINUTE: '4' });
    const key = await keyFor(server, 'mcp@example.com');
    const headers = { ...ACCEPT, 'x-api-key': key };
    const init = await server.request('POST', '/mcp', { body: INIT, headers });
    expect(init.status).toBe(200);
    // No session: each later message goes on its own, with the version initialize agreed.
    const session = { 'mcp-protocol-version': '2025-06-18' };
    const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
    expect(
      (
        await server.request('POST', '/mcp', {
          body: initialized,
          headers: { ...headers, ...session },
        })
      ).status,
    ).toBe(202);
    const call = (id: number) =>
      server.request('POST', '/mcp', {
        body: {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'memory_store', arguments: { memory_key: `m${id}`, memory_value: 'v' } },
        },
        headers: { ...headers, ...session },
      });
    const ok = await call(2);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('credit_balance_cents');
    expect((await store(server, key, 'rest')).status).toBe(200); // the 4th request of this key
    const before = await accountOf(server, key);
    expect(before).toEqual({ balance: 48, entries: 3 });

    expectRateLimited(await call(3), 'per-key', 60, true);
    expect(await accountOf(server, key)).toEqual(before);
  });

  it('initialize without a key counts per address', async () => {
    const server = await limitedServer({ AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '2' });
    expect((await server.request('POST', '/mcp', { body: INIT, headers: ACCEPT })).status).toBe(200);
    expect((await server.request('POST', '/mcp', { body: INIT, headers: ACCEPT })).status).toBe(200);
    expectRateLimited(
      await server.request('POST', '/mcp', { body: INIT, headers: ACCEPT }),
      'unauthenticated',
      60,
      true,
    );
  });
});

describe('disposable and malformed e-mail addresses (whatever AC_RATE_LIMIT says)', () => {
  it.each([
    [
      'a disposable domain',
      'agent@mailinator.com',
      /mailinator\.com, a disposable \(throwaway\) address provider/,
    ],
    ['a subdomain of a disposable domain', 'agent@inbox.mailinator.com', /disposable/],
    ['a disposable domain in capitals', ' Agent@YOPMAIL.com ', /yopmail\.com, a disposable/],
    ['no dot in the domain', 'a@b', /valid e-mail address/],
    ['a space', 'a b@example.com', /valid e-mail address/],
    ['a control character', 'a\u0007b@example.com', /valid e-mail address/],
    ['two @', 'a@b@example.com', /valid e-mail address/],
    [
      'over 254 characters',
      `${'a'.repeat(60)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(10)}.com`,
      /at most 254/,
    ],
    [
      'a local part over 64 characters',
      `${'a'.repeat(65)}@example.com`,
      /at most 64 characters before the @/,
    ],
    ['a domain label over 63 characters', `a@${'b'.repeat(64)}.com`, /at most 63/],
    ['not a string', 42, /email/],
  ])('%s is a 400 naming the field email', async (_what, email, message) => {
    const server = await startTestServer();
    servers.push(server);
    const res = await server.request('POST', '/api/ac/register', { body: { email } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: expect.stringMatching(message),
      code: 'invalid_input',
      field: 'email',
    });
    expect(res.body.error).toMatch(/^email/);
  });

  it('keeps ordinary addresses: example.com, plus tags, apostrophes, punycode', async () => {
    const server = await startTestServer();
    servers.push(server);
    for (const email of [
      'agent-1@example.com',
      'a+tag@example.org',
      "o'brien@example.net",
      'x@xn--r8jz45g.jp',
    ]) {
      expect((await register(server, email)).status, email).toBe(200);
    }
  });

  it('a disposable address is not counted by the registration limits', async () => {
    const server = await limitedServer({
      AC_REGISTER_PER_HOUR_PER_ADDRESS: '1',
      AC_REGISTER_PER_HOUR_PER_DOMAIN: '1',
    });
    for (let i = 0; i < 3; i++) expect((await register(server, `d${i}@mailinator.com`)).status).toBe(400);
    expect((await register(server, 'kept@example.com')).status).toBe(200);
  });
});

describe('configuration', () => {
  it('has limits on by default: 600 a minute per key, 60 without a key, 5 and 50 registrations an hour', () => {
    expect(loadConfig({}).rateLimit).toEqual({
      enabled: true,
      perKeyPerMinute: 600,
      unauthenticatedPerMinute: 60,
      registerPerHourPerAddress: 5,
      registerPerHourPerDomain: 50,
    });
    expect(loadConfig({ AC_RATE_LIMIT: 'off' }).rateLimit.enabled).toBe(false);
    expect(() => loadConfig({ AC_RATE_LIMIT: 'no' })).toThrow(/AC_RATE_LIMIT/);
  });

  it('parses AC_TRUST_PROXY into Express trust proxy, refusing what is neither a count nor an address', () => {
    const trust = (value?: string) =>
      loadConfig(value === undefined ? {} : { AC_TRUST_PROXY: value }).trustProxy;
    expect(trust()).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('true')).toBe(true);
    expect(trust('1')).toBe(1);
    expect(trust('10.0.0.1, 192.168.0.0/16,fd00::/8, loopback')).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      'fd00::/8',
      'loopback',
    ]);
    expect(() => trust('proxy.internal')).toThrow(
      /AC_TRUST_PROXY.*not an address or subnet: proxy\.internal/,
    );
    expect(() => trust('10.0.0.0/40')).toThrow(/AC_TRUST_PROXY/);
  });
});
