/** Each row of the error table, over real HTTP: status, JSON body with a sentence and a code, nothing charged. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { type ApiResponse, startTestServer, type TestServer } from '../helpers/test-server.js';

function expectError(res: ApiResponse, status: number, code: string, mentions?: RegExp) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(typeof res.body.error).toBe('string');
  expect(res.body.error.length).toBeGreaterThan(10);
  expect(res.body.code).toBe(code);
  expect(res.text).not.toMatch(/at .+\.(ts|js):\d+/); // no stack trace
  if (mentions) expect(res.body.error).toMatch(mentions);
}

describe('error responses', () => {
  let server: TestServer;
  let key: string;
  const live = new FakeLiveSource();

  beforeAll(async () => {
    server = await startTestServer({
      live,
      env: {
        AC_MEMORIES_PER_AGENT: '3',
        AC_METADATA_MAX_BYTES: '1024',
        AC_BODY_MAX_BYTES: '4096',
        AC_MEMORY_VALUE_MAX_BYTES: '2000',
      },
    });
    key = await server.register();
  });
  afterAll(() => server.close());

  const balance = async (k = key) =>
    (await server.request('GET', '/api/ac/account', { key: k })).body.credit_balance_cents as number;
  const post = (path: string, body: unknown, k = key) => server.request('POST', path, { key: k, body });

  describe('400', () => {
    it('malformed JSON', async () => {
      const res = await server.request('POST', '/api/ac/memory', { key, rawBody: '{"memory_key": ' });
      expectError(res, 400, 'invalid_json', /not valid JSON/);
    });
    it('a JSON array, null or a number as the body', async () => {
      expectError(
        await server.request('POST', '/api/ac/memory', { key, rawBody: '[1,2]' }),
        400,
        'invalid_input',
        /JSON object/,
      );
      expectError(
        await server.request('POST', '/api/ac/memory', { key, rawBody: 'null' }),
        400,
        'invalid_json',
      );
      expectError(
        await server.request('POST', '/api/ac/memory', { key, rawBody: '42' }),
        400,
        'invalid_json',
      );
    });
    it('a missing field, named', async () => {
      const res = await post('/api/ac/memory', { agent_key: key, memory_value: 'v' });
      expectError(res, 400, 'invalid_input', /memory_key is required/);
      expect(res.body.field).toBe('memory_key');
    });
    it('an ill-typed field', async () => {
      const res = await post('/api/ac/memory', { agent_key: key, memory_key: 'k', memory_value: 42 });
      expectError(res, 400, 'invalid_input', /memory_value/);
    });
    it('a value out of range or not in the enum', async () => {
      expectError(
        await post('/api/ac/memory/search', { agent_key: key, limit: 101 }),
        400,
        'invalid_input',
        /at most 100/,
      );
      expectError(
        await post('/api/ac/memory/search', { agent_key: key, limit: 1.5 }),
        400,
        'invalid_input',
        /integer/,
      );
      expectError(
        await post('/api/ac/memory', {
          agent_key: key,
          memory_key: 'k',
          memory_value: 'v',
          memory_type: 'note',
        }),
        400,
        'invalid_input',
        /"context", "preference", "workflow", "fact"/,
      );
      expectError(
        await post('/api/ac/data', {
          agent_key: key,
          query_type: 'weather',
          query: 'x',
          cache_minutes: 1441,
        }),
        400,
        'invalid_input',
        /cache_minutes/,
      );
      expectError(
        await post('/api/ac/data', { agent_key: key, query_type: 'weather', query: '   ' }),
        400,
        'invalid_input',
      );
      expectError(
        await post('/api/ac/data', { agent_key: key, query_type: 'weather', query: 'x'.repeat(501) }),
        400,
        'invalid_input',
        /500/,
      );
    });
    it('limits on key, value and metadata', async () => {
      const base = { agent_key: key, memory_value: 'v' };
      expectError(await post('/api/ac/memory', { ...base, memory_key: '' }), 400, 'invalid_input', /empty/);
      expectError(
        await post('/api/ac/memory', { ...base, memory_key: 'k'.repeat(257) }),
        400,
        'invalid_input',
        /256/,
      );
      expectError(
        await post('/api/ac/memory', { ...base, memory_key: 'a\u0000b' }),
        400,
        'invalid_input',
        /control/,
      );
      expectError(
        await post('/api/ac/memory', { agent_key: key, memory_key: 'k', memory_value: 'é'.repeat(1001) }),
        400,
        'invalid_input',
        /2000 bytes/,
      );
      expectError(
        await post('/api/ac/memory', { ...base, memory_key: 'k', metadata: [1] }),
        400,
        'invalid_input',
        /JSON object/,
      );
      expectError(
        await post('/api/ac/memory', { ...base, memory_key: 'k', metadata: { big: 'x'.repeat(3000) } }),
        400,
        'invalid_input',
        /metadata/,
      );
    });
    it('an unknown field, with the allowed ones', async () => {
      const res = await post('/api/ac/memory', {
        agent_key: key,
        memory_key: 'k',
        memory_value: 'v',
        memory_tyep: 'fact',
      });
      expectError(
        res,
        400,
        'invalid_input',
        /unknown field\(s\) memory_tyep; allowed fields: agent_key, memory_key/,
      );
    });
    it('register with an invalid e-mail or a long name', async () => {
      expectError(
        await server.request('POST', '/api/ac/register', { body: { email: 'not-an-email' } }),
        400,
        'invalid_input',
        /e-mail/,
      );
      expectError(
        await server.request('POST', '/api/ac/register', {
          body: { email: 'x@example.com', name: 'n'.repeat(101) },
        }),
        400,
        'invalid_input',
        /100/,
      );
      expectError(
        await server.request('POST', '/api/ac/register', {}),
        400,
        'invalid_input',
        /email is required/,
      );
    });
    it('missing agent_key, and duplicated query parameters', async () => {
      expectError(
        await post('/api/ac/memory', { memory_key: 'k', memory_value: 'v' }),
        400,
        'invalid_input',
        /agent_key is required/,
      );
      const dup = await server.request('GET', `/api/ac/memory?agent_key=${key}&memory_key=a&memory_key=b`, {
        key,
      });
      expectError(dup, 400, 'invalid_input', /memory_key/);
    });
  });

  describe('401', () => {
    it('a missing key says how to pass one', async () => {
      const res = await server.request('POST', '/api/ac/memory', {
        body: { agent_key: key, memory_key: 'k', memory_value: 'v' },
      });
      expectError(res, 401, 'unauthorized', /X-API-Key.*register/);
    });
    it('an unknown key, by either header', async () => {
      const body = { agent_key: 'ac_nope', memory_key: 'k', memory_value: 'v' };
      expectError(
        await server.request('POST', '/api/ac/memory', { key: 'ac_nope', body }),
        401,
        'unauthorized',
        /Unknown API key/,
      );
      expectError(
        await server.request('POST', '/api/ac/memory', { bearer: 'ac_nope', body }),
        401,
        'unauthorized',
      );
      expectError(await server.request('GET', '/api/ac/account', { bearer: 'ac_nope' }), 401, 'unauthorized');
    });
  });

  describe('403', () => {
    it('agent_key differing from the header key changes nothing', async () => {
      const other = await server.register();
      const before = await balance();
      const res = await post('/api/ac/memory', { agent_key: other, memory_key: 'k', memory_value: 'v' });
      expectError(res, 403, 'forbidden', /agent_key does not match/);
      expect(await balance()).toBe(before);
      expect(await balance(other)).toBe(50);
    });
    it('the per-agent memory quota; updates still work', async () => {
      const k = await server.register();
      for (const name of ['a', 'b', 'c']) {
        expect(
          (await post('/api/ac/memory', { agent_key: k, memory_key: name, memory_value: 'v' }, k)).status,
        ).toBe(200);
      }
      const res = await post('/api/ac/memory', { agent_key: k, memory_key: 'd', memory_value: 'v' }, k);
      expectError(res, 403, 'quota_exceeded', /3 memories/);
      expect(await balance(k)).toBe(47);
      expect(
        (await post('/api/ac/memory', { agent_key: k, memory_key: 'a', memory_value: 'w' }, k)).status,
      ).toBe(200);
    });
  });

  describe('402 on every paid operation, changing nothing', () => {
    let broke: string;
    beforeAll(async () => {
      broke = await server.register();
      for (let i = 0; i < 50; i++) {
        const res = await post(
          '/api/ac/memory',
          { agent_key: broke, memory_key: 'spend', memory_value: `${i}` },
          broke,
        );
        expect(res.status).toBe(200);
      }
      expect(await balance(broke)).toBe(0);
    });
    const cases: [string, string, Record<string, unknown>][] = [
      ['store', '/api/ac/memory', { memory_key: 'new', memory_value: 'v' }],
      ['search', '/api/ac/memory/search', {}],
      ['data', '/api/ac/data', { query_type: 'news', query: 'never fetched' }],
    ];
    for (const [name, path, body] of cases) {
      it(name, async () => {
        const calls = live.calls.length;
        const res = await post(path, { agent_key: broke, ...body }, broke);
        expectError(res, 402, 'insufficient_credits', /costs \d+ cents but the balance is 0/);
        expect(res.body.required_cents).toBeGreaterThan(0);
        expect(res.body.credit_balance_cents).toBe(0);
        expect(live.calls.length).toBe(calls);
      });
    }
    it('retrieve', async () => {
      const res = await server.request('GET', '/api/ac/memory', {
        key: broke,
        query: { agent_key: broke, memory_key: 'spend' },
      });
      expectError(res, 402, 'insufficient_credits');
      expect(res.body.required_cents).toBe(1);
    });
    it('delete stays free at zero balance', async () => {
      const res = await server.request('DELETE', '/api/ac/memory', {
        key: broke,
        body: { agent_key: broke, memory_key: 'spend' },
      });
      expect(res.status).toBe(200);
      expect(res.body.credit_balance_cents).toBe(0);
    });
  });

  describe('404', () => {
    it('retrieve and delete of an absent memory cost nothing', async () => {
      const before = await balance();
      const res = await server.request('GET', '/api/ac/memory', {
        key,
        query: { agent_key: key, memory_key: 'absent' },
      });
      expectError(res, 404, 'not_found', /"absent"/);
      const del = await server.request('DELETE', '/api/ac/memory', {
        key,
        body: { agent_key: key, memory_key: 'absent' },
      });
      expectError(del, 404, 'not_found');
      expect(await balance()).toBe(before);
    });
    it('an unknown route', async () => {
      expectError(await server.request('GET', '/api/ac/nothing-here'), 404, 'not_found', /openapi/);
      expectError(await server.request('GET', '/'), 404, 'not_found');
    });
    it('an unknown city or asset costs nothing', async () => {
      const before = await balance();
      live.failWith('not_found');
      const res = await post('/api/ac/data', { agent_key: key, query_type: 'weather', query: 'Atlantis' });
      live.next = undefined;
      expectError(res, 404, 'not_found');
      expect(await balance()).toBe(before);
    });
    it('the admin route while AC_ADMIN_TOKEN is unset', async () => {
      const res = await server.request('POST', '/api/ac/admin/credits', {
        bearer: 'anything-at-all-123',
        body: { email: 'a@b.co', cents: 5 },
      });
      expectError(res, 404, 'not_found');
    });
  });

  it('405 on a known path with another method, with Allow', async () => {
    const res = await server.request('PUT', '/api/ac/memory', { key, body: {} });
    expectError(res, 405, 'method_not_allowed', /use POST or GET or DELETE/);
    expect(res.headers.get('allow')).toBe('POST, GET, DELETE');
    const ping = await server.request('POST', '/api/ac/ping', { body: {} });
    expectError(ping, 405, 'method_not_allowed');
    expect(ping.headers.get('allow')).toBe('GET, HEAD');
  });

  it('HEAD never runs an operation: 405 and nothing charged', async () => {
    await post('/api/ac/memory', { agent_key: key, memory_key: 'headed', memory_value: 'v' });
    const before = await balance();
    const res = await server.request('HEAD', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'headed' },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(await balance()).toBe(before);
    expect((await server.request('HEAD', '/api/ac/ping')).status).toBe(200);
  });

  it('paths match as Express matches them by default: a trailing slash and letter case do not matter', async () => {
    expect((await server.request('GET', '/api/ac/ping/')).status).toBe(200);
    expect((await server.request('GET', '/API/AC/Ping')).body).toMatchObject({ status: 'ok' });
    const stored = await server.request('POST', '/api/ac/memory/', {
      key,
      body: { agent_key: key, memory_key: 'slashed', memory_value: 'v' },
    });
    expect(stored.status).toBe(200);
    const read = await server.request('GET', '/Api/Ac/Memory', {
      key,
      query: { agent_key: key, memory_key: 'slashed' },
    });
    expect(read.body).toMatchObject({ success: true, memory: { memory_value: 'v' } });
    expectError(await server.request('GET', '/api/ac/ping//'), 404, 'not_found');
    const options = await server.request('OPTIONS', '/API/ac/memory/');
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('OPTIONS, POST, GET, DELETE');
    const put = await server.request('PUT', '/api/AC/memory/', { key, body: {} });
    expectError(put, 405, 'method_not_allowed');
    expect(put.headers.get('allow')).toBe('POST, GET, DELETE');
    expectError(await server.request('GET', '/api/ac/pin'), 404, 'not_found');
  });

  it('OPTIONS answers 204 with Allow on known paths and 404 elsewhere', async () => {
    const res = await server.request('OPTIONS', '/api/ac/memory');
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')).toBe('OPTIONS, POST, GET, DELETE');
    expect((await server.request('OPTIONS', '/api/ac/admin/credits')).status).toBe(404);
    expect((await server.request('OPTIONS', '/api/ac/nowhere')).status).toBe(404);
  });

  it('deeply nested metadata is a 400, not a crash', async () => {
    const deep = `${'['.repeat(1800)}1${']'.repeat(1800)}`;
    const rawBody = `{"agent_key":"${key}","memory_key":"deep","memory_value":"v","metadata":{"a":${deep}}}`;
    expectError(
      await server.request('POST', '/api/ac/memory', { key, rawBody }),
      400,
      'invalid_input',
      /nest deeper than 32/,
    );
    let ok: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++) ok = { n: ok };
    expect(
      (
        await post('/api/ac/memory', {
          agent_key: key,
          memory_key: 'nested',
          memory_value: 'v',
          metadata: ok,
        })
      ).status,
    ).toBe(200);
  });

  it('409 on an e-mail already registered, whatever its case', async () => {
    await server.register('twice@example.com');
    const res = await server.request('POST', '/api/ac/register', { body: { email: 'TWICE@example.com ' } });
    expectError(res, 409, 'conflict', /already exists/);
  });

  it('413 on a body over the limit, changing nothing', async () => {
    const before = await balance();
    const res = await post('/api/ac/memory', {
      agent_key: key,
      memory_key: 'big',
      memory_value: 'x'.repeat(5000),
    });
    expectError(res, 413, 'payload_too_large', /4096 bytes/);
    expect(await balance()).toBe(before);
  });

  it('415 on a POST or DELETE whose body is not JSON', async () => {
    const form = await server.request('POST', '/api/ac/memory', {
      key,
      rawBody: 'memory_key=a',
      contentType: 'application/x-www-form-urlencoded',
    });
    expectError(form, 415, 'unsupported_media_type', /Content-Type: application\/json/);
    const text = await server.request('DELETE', '/api/ac/memory', {
      key,
      rawBody: '{}',
      contentType: 'text/plain',
    });
    expectError(text, 415, 'unsupported_media_type');
  });

  it('502 and 504 from live data cost nothing', async () => {
    const before = await balance();
    live.failWith('upstream_failed');
    expectError(
      await post('/api/ac/data', { agent_key: key, query_type: 'news', query: 'a' }),
      502,
      'upstream_failed',
    );
    live.failWith('upstream_timeout');
    expectError(
      await post('/api/ac/data', { agent_key: key, query_type: 'news', query: 'b' }),
      504,
      'upstream_timeout',
    );
    live.next = undefined;
    expect(await balance()).toBe(before);
  });

  it('500 with a generic sentence for anything unexpected, and the process stays up', async () => {
    const before = await balance();
    live.next = async () => {
      throw new TypeError('secret internal detail');
    };
    const res = await post('/api/ac/data', { agent_key: key, query_type: 'news', query: 'c' });
    live.next = undefined;
    expectError(res, 500, 'internal', /safe to retry/);
    expect(res.text).not.toContain('secret internal detail');
    expect(await balance()).toBe(before);
    expect((await server.request('GET', '/api/ac/ping')).status).toBe(200);
  });

  it('requests the HTTP parser rejects still get JSON: bad header 400, huge headers 431', async () => {
    const { port } = new URL(server.url);
    const raw = async (head: string) => {
      const net = await import('node:net');
      return new Promise<string>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(head));
        let data = '';
        socket.on('data', (d) => {
          data += d;
        });
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
    };
    const bad = await raw('POST /api/ac/memory HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1.1 400/);
    expect(JSON.parse(bad.split('\r\n\r\n')[1] as string).code).toBe('invalid_input');
    const huge = await raw(`GET /api/ac/ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1.1 431/);
    expect((await server.request('GET', '/api/ac/ping')).status).toBe(200);
  });

  it('X-API-Key and Bearer carrying different keys is a 400', async () => {
    const res = await server.request('GET', '/api/ac/account', { key, bearer: 'ac_other' });
    expectError(res, 400, 'invalid_input', /different keys/);
  });
});
