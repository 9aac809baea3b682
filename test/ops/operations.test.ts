/**
 * Operating it: request ids on every answer and log line, security headers, CORS off by default and on
 * for listed origins only, readiness (ready, store failed, draining), and logs that never hold a key, a
 * query string or a memory value.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeLiveCache } from '../../src/cache/node-live-cache.js';
import { loadConfig } from '../../src/config.js';
import { createCore } from '../../src/core/core.js';
import { createOperations } from '../../src/core/operation-table.js';
import { createHttpApp } from '../../src/http/create-http-app.js';
import { readinessOf } from '../../src/http/discovery.js';
import { type RunningServer, startServer } from '../../src/http/http-server.js';
import { createLogger } from '../../src/logger.js';
import { openService } from '../../src/service.js';
import { JsonState } from '../../src/store/json/json-state.js';
import { JsonStore } from '../../src/store/json/json-store.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { request, startTestServer, type TestServer } from '../helpers/test-server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('request ids and security headers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('every answer carries X-Request-Id: the client’s when sane, else a fresh UUID', async () => {
    const answers = await Promise.all([
      server.request('GET', '/api/ac/ping'),
      server.request('GET', '/nowhere'),
      server.request('PUT', '/api/ac/memory'),
      server.request('POST', '/api/ac/memory', { rawBody: '{bad', key: 'ac_x' }),
      server.request('OPTIONS', '/api/ac/memory'),
      server.request('POST', '/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }),
      server.request('GET', '/api/ac/ready'),
    ]);
    // /mcp (stateless on every store): 406 for the missing Accept.
    expect(answers.map((a) => a.status)).toEqual([200, 404, 405, 400, 204, 406, 200]);
    for (const a of answers) expect(a.headers.get('x-request-id')).toMatch(UUID);
    expect(new Set(answers.map((a) => a.headers.get('x-request-id'))).size).toBe(answers.length);

    const mine = await server.request('GET', '/api/ac/ping', {
      headers: { 'X-Request-Id': 'trace:abc-123_4.5' },
    });
    expect(mine.headers.get('x-request-id')).toBe('trace:abc-123_4.5');
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', '']) {
      const res = await server.request('GET', '/api/ac/ping', { headers: { 'X-Request-Id': bad } });
      expect(res.headers.get('x-request-id')).toMatch(UUID);
    }
  });

  it('the OWASP REST set of security headers (from helmet) with a strict CSP and no-store on every answer, no X-Powered-By; the documents still work', async () => {
    for (const [p, type] of [
      ['/api/ac/ping', 'application/json'],
      ['/api/ac/llms.txt', 'text/plain'],
      ['/api/ac/openapi.json', 'application/json'],
      ['/nowhere', 'application/json'],
    ] as const) {
      const res = await server.request('GET', p);
      expect(res.headers.get('content-type')).toContain(type);
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(res.headers.get('cache-control')).toBe('no-store');
      for (const pageOnly of [
        'x-powered-by',
        'x-xss-protection',
        'x-dns-prefetch-control',
        'origin-agent-cluster',
        'x-download-options',
        'x-permitted-cross-domain-policies',
        'cross-origin-opener-policy',
      ])
        expect(res.headers.get(pageOnly)).toBeNull();
    }
    expect((await server.request('GET', '/api/ac/llms.txt')).text).toContain('/api/ac/memory');
    expect((await server.request('GET', '/api/ac/openapi.json')).body.openapi).toBe('3.1.0');
  });

  it('CORS is off by default: no Access-Control-* header, even for a preflight', async () => {
    const headers = { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' };
    for (const res of [
      await server.request('OPTIONS', '/api/ac/memory', { headers }),
      await server.request('GET', '/api/ac/ping', { headers: { Origin: 'https://app.example' } }),
    ]) {
      expect([...res.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
  });

  it('a readiness document: 200 ready, in ping, OpenAPI (with 503) and llms.txt', async () => {
    const res = await server.request('GET', '/api/ac/ready');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ready: true, status: 'ready' });
    const ping = await server.request('GET', '/api/ac/ping');
    expect(ping.body.agent_api.ready).toEqual({ method: 'GET', path: '/api/ac/ready' });
    const openapi = (await server.request('GET', '/api/ac/openapi.json')).body;
    expect(Object.keys(openapi.paths['/api/ac/ready'].get.responses)).toEqual(['200', '503']);
    expect((await server.request('GET', '/api/ac/llms.txt')).text).toContain('GET /api/ac/ready');
    expect((await server.request('HEAD', '/api/ac/ready')).status).toBe(200);
  });
});

describe('CORS for listed origins', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { AC_CORS_ORIGINS: 'https://app.example, http://localhost:5173/' },
    });
  });
  afterAll(() => server.close());

  it('answers a preflight from a listed origin, /mcp included, with the headers agents need', async () => {
    for (const p of ['/api/ac/memory', '/mcp']) {
      const res = await server.request('OPTIONS', p, {
        headers: {
          Origin: 'https://app.example',
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'x-api-key, content-type, idempotency-key',
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      const allowed = res.headers.get('access-control-allow-headers')?.toLowerCase().split(',') ?? [];
      for (const h of [
        'x-api-key',
        'authorization',
        'content-type',
        'idempotency-key',
        'x-request-id',
        'mcp-protocol-version',
        'mcp-method',
        'mcp-name',
      ])
        expect(allowed).toContain(h);
      expect(allowed).not.toContain('mcp-session-id'); // /mcp keeps no sessions
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('exposes the headers a browser client reads; an origin not listed gets no CORS header', async () => {
    const ok = await server.request('GET', '/api/ac/ping', { headers: { Origin: 'http://localhost:5173' } });
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const exposed = ok.headers.get('access-control-expose-headers')?.toLowerCase().split(',') ?? [];
    for (const h of [
      'x-request-id',
      'retry-after',
      'ratelimit',
      'ratelimit-policy',
      'idempotent-replayed',
      'etag',
    ])
      expect(exposed).toContain(h);
    expect(exposed).not.toContain('mcp-session-id');
    expect(ok.headers.get('vary')).toContain('Origin');

    for (const res of [
      await server.request('GET', '/api/ac/ping', { headers: { Origin: 'https://evil.example' } }),
      await server.request('OPTIONS', '/api/ac/memory', {
        headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
      }),
    ]) {
      expect([...res.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
    // An OPTIONS without Origin is still the app's own: 204 with Allow.
    const plain = await server.request('OPTIONS', '/api/ac/memory');
    expect(plain.status).toBe(204);
    expect(plain.headers.get('allow')).toContain('POST');
  });
});

describe('readiness when the store has failed', () => {
  it('answers 503 with Retry-After once a disk write failed; ping stays 200', async () => {
    const store = new JsonStore(new JsonState(), {
      append: async () => {
        throw new Error('EIO: disk gone');
      },
      waitFor: async () => {},
      compactionDue: () => false,
      compact: async () => ({ folded: Promise.resolve() }),
      close: async () => {},
    });
    const core = createCore({ store, cache: createNodeLiveCache(1440), live: new FakeLiveSource() });
    const app = createHttpApp({
      core,
      operations: createOperations(core.schemas),
      logger: createLogger('silent'),
      bodyMaxBytes: 1024,
      publicUrl: undefined,
      adminToken: undefined,
      readiness: async () => readinessOf(false, await store.health()),
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await request(url, 'GET', '/api/ac/ready')).status).toBe(200);
      const reg = await request(url, 'POST', '/api/ac/register', { body: { email: 'x@example.com' } });
      expect(reg.status).toBe(500);
      const ready = await request(url, 'GET', '/api/ac/ready');
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(ready.body).toMatchObject({ ready: false, status: 'store_failed' });
      expect(ready.body.error).toMatch(/restart/);
      expect((await request(url, 'GET', '/api/ac/ping')).status).toBe(200);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('draining', () => {
  it('in flight: finishes with Connection: close; arriving meanwhile: readiness 503, then the store closes', async () => {
    const live = new FakeLiveSource();
    let release: () => void = () => {};
    live.next = (_type, query) =>
      new Promise((resolve) => {
        release = () => resolve({ data: { echo: query }, source: 'fake', asOf: '2026-11-21T11:00:00.000Z' });
      });
    const server = await startTestServer({ live });
    try {
      const key = await server.register();
      const slow = server.request('POST', '/api/ac/data', {
        key,
        body: { agent_key: key, query_type: 'news', query: 'slow' },
      });
      while (live.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));

      // A connection whose request has begun (not idle) before the drain, finished during it.
      const { port } = new URL(server.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('GET /api/ac/ready HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      await new Promise((resolve) => setTimeout(resolve, 50));
      let raw = '';
      socket.on('data', (d) => {
        raw += d;
      });
      const ended = new Promise((resolve) => socket.once('close', resolve));

      const closed = server.running.close();
      socket.write('\r\n');
      await ended;
      expect(raw).toMatch(/^HTTP\/1\.1 503/);
      expect(raw).toMatch(/\r\nRetry-After: \d+\r\n/i);
      expect(raw).toMatch(/\r\nConnection: close\r\n/i);
      expect(raw).toContain('"status":"shutting_down"');

      expect(await server.running.service.store.health()).toBe('ok');
      release();
      const res = await slow;
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('connection')).toBe('close');
      await closed;
      expect(await server.running.service.store.health()).toBe('closed');
    } finally {
      await server.close();
    }
  });
});

describe('logs', () => {
  let running: RunningServer;
  let dataDir: string;
  const lines: string[] = [];
  const live = new FakeLiveSource();

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'ac-logs-'));
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', AC_RATE_LIMIT: 'off' });
    const logger = createLogger('trace', {
      format: 'json',
      destination: { write: (line) => lines.push(line) },
    });
    running = await startServer(await openService(config, { command: 'serve', logger, live }), {
      command: 'serve',
    });
  });
  afterAll(async () => {
    await running.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('carry the request id on every line of a request, and never a key, a query string or a memory value', async () => {
    const url = running.url;
    const reg = await request(url, 'POST', '/api/ac/register', { body: { email: 'logs@example.com' } });
    const key = reg.body.agent_key as string;
    const value = 'memory-value-that-must-never-be-logged-4711';
    const mcpValue = 'mcp-memory-value-that-must-never-be-logged-0815';
    const ids: string[] = [];
    const track = <T extends { headers: Headers }>(res: T): T => {
      ids.push(res.headers.get('x-request-id') as string);
      return res;
    };
    track(
      await request(url, 'POST', '/api/ac/memory', {
        key,
        body: { agent_key: key, memory_key: 'k', memory_value: value },
      }),
    );
    track(
      await request(url, 'GET', '/api/ac/memory', {
        bearer: key,
        query: { agent_key: key, memory_key: 'k' },
      }),
    );
    track(
      await request(url, 'GET', '/api/ac/memory', { key, query: { agent_key: `${key}x`, memory_key: 'k' } }),
    );
    track(await request(url, 'GET', '/api/ac/account', { key: `${key}x` }));
    track(await request(url, 'POST', '/api/ac/memory', { key, rawBody: `{"memory_value": "${value}"` }));
    live.next = async () => {
      throw new TypeError(`internal failure near ${value}`.replace(value, 'the value'));
    };
    const failed = track(
      await request(url, 'POST', '/api/ac/data', {
        key,
        body: { agent_key: key, query_type: 'news', query: 'q' },
      }),
    );
    expect(failed.status).toBe(500);

    const client = new Client({ name: 'log-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    await client.callTool({ name: 'memory_store', arguments: { memory_key: 'm', memory_value: mcpValue } });
    const got = await client.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'm' } });
    expect(JSON.stringify(got)).toContain(mcpValue);
    const mcpFailed = await client.callTool({
      name: 'data_fetch',
      arguments: { query_type: 'news', query: 'boom' },
    });
    expect(mcpFailed.isError).toBe(true);
    await client.close();
    live.next = undefined;

    const text = lines.join('');
    expect(text).toContain('request failed');
    expect(text).toContain('MCP request failed');
    for (const secret of [key, value, mcpValue, 'agent_key=', 'memory_key=k', 'Bearer', 'authorization']) {
      expect(text.toLowerCase()).not.toContain(secret.toLowerCase());
    }

    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const requestLines = parsed.filter((l) => l.msg === 'request');
    expect(requestLines.length).toBeGreaterThanOrEqual(ids.length + 3);
    for (const l of requestLines) expect(typeof l.reqId).toBe('string');
    for (const id of ids) expect(requestLines.map((l) => l.reqId)).toContain(id);
    const failure = parsed.find((l) => l.msg === 'request failed');
    expect(failure?.reqId).toBe(failed.headers.get('x-request-id'));
    // The MCP tool failure is logged with the id of the /mcp request that carried the call.
    const mcpFailure = parsed.find((l) => l.msg === 'MCP request failed');
    const mcpIds = requestLines.filter((l) => l.path === '/mcp').map((l) => l.reqId);
    expect(mcpIds).toContain(mcpFailure?.reqId);
  });
});

describe('error bodies and log formats', () => {
  it('internal errors never show their message or stack, whatever NODE_ENV says', async () => {
    const previous = process.env.NODE_ENV;
    const live = new FakeLiveSource();
    live.next = async () => {
      throw new TypeError('secret internal detail at /srv/app/core.js:12');
    };
    for (const env of ['development', 'production']) {
      process.env.NODE_ENV = env; // Express reads it when an app is created
      const server = await startTestServer({ live });
      try {
        const key = await server.register();
        const res = await server.request('POST', '/api/ac/data', {
          key,
          body: { agent_key: key, query_type: 'news', query: 'x' },
        });
        expect(res.status).toBe(500);
        expect(Object.keys(res.body).sort()).toEqual(['code', 'error']);
        expect(res.text).not.toContain('secret');
        expect(res.text).not.toMatch(/\.(js|ts):\d+|TypeError/);
        const bad = await server.request('POST', '/api/ac/memory', { key, rawBody: '{"a": tru' });
        expect(bad.body.code).toBe('invalid_json');
        expect(bad.text).not.toMatch(/Unexpected|position|SyntaxError/);
      } finally {
        await server.close();
        process.env.NODE_ENV = previous;
      }
    }
  });

  it('JSON lines by default; readable lines with AC_LOG_FORMAT=pretty (or auto on a terminal)', () => {
    const out: string[] = [];
    const destination = { write: (line: string) => out.push(line) };
    createLogger('info', { format: 'json', destination })
      .child({ reqId: 'r-1' })
      .info({ status: 200 }, 'request');
    createLogger('info', { format: 'pretty', destination, isTty: false })
      .child({ reqId: 'r-2' })
      .info({ status: 201 }, 'request');
    createLogger('info', { format: 'auto', destination, isTty: true }).info('hello');
    createLogger('info', { format: 'auto', destination, isTty: false }).info('hello');
    expect(JSON.parse(out[0] as string)).toMatchObject({ reqId: 'r-1', status: 200, msg: 'request' });
    expect(() => JSON.parse(out[1] as string)).toThrow();
    expect(out[1]).toMatch(/INFO.*request/);
    expect(out[1]).toContain('r-2');
    expect(() => JSON.parse(out[2] as string)).toThrow();
    expect(JSON.parse(out[3] as string).msg).toBe('hello');
  });
});
