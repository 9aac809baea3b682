/** Ping, the OpenAPI document (checked by a real OpenAPI 3.1 validator), llms.txt and the plugin manifest. */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restOperations } from '../../src/core/operation-table.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const SPEC_OPERATIONS = [
  'ping',
  'register',
  'memory_store',
  'memory_retrieve',
  'memory_delete',
  'memory_search',
  'data',
  'openapi',
  'llms_txt',
];

describe('discovery documents', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
  });
  afterAll(() => server.close());

  it('ping answers as section 4.1 says, without a key', async () => {
    const res = await server.request('GET', '/api/ac/ping');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.service).toBe('agent-context');
    expect(res.body.version).toBe('1.0.0');
    expect(res.body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(Math.abs(Date.parse(res.body.timestamp) - Date.now())).toBeLessThan(60_000);
    for (const name of SPEC_OPERATIONS) expect(Object.keys(res.body.agent_api)).toContain(name);
    expect(res.body.agent_api).toMatchObject({
      ping: { method: 'GET', path: '/api/ac/ping' },
      register: { method: 'POST', path: '/api/ac/register' },
      memory_store: { method: 'POST', path: '/api/ac/memory' },
      memory_retrieve: { method: 'GET', path: '/api/ac/memory' },
      memory_delete: { method: 'DELETE', path: '/api/ac/memory' },
      memory_search: { method: 'POST', path: '/api/ac/memory/search' },
      data: { method: 'POST', path: '/api/ac/data' },
      openapi: { method: 'GET', path: '/api/ac/openapi.json' },
      llms_txt: { method: 'GET', path: '/api/ac/llms.txt' },
    });
    expect(res.body.agent_api.admin_credits).toBeUndefined();
    expect(res.body.pricing).toEqual({
      memory_op_cents: 1,
      live_data_cents: 2,
      cached_data_cents: 0,
      free_credits_on_signup_cents: 50,
    });
    expect(res.body.auth).toContain('X-API-Key');
    expect(res.body.auth).toContain('Authorization: Bearer');
  });

  it('every path in agent_api answers with something other than 404/405', async () => {
    const ping = await server.request('GET', '/api/ac/ping');
    for (const [name, { method, path }] of Object.entries(
      ping.body.agent_api as Record<string, { method: string; path: string }>,
    )) {
      const res = await server.request(method, path, method === 'GET' ? {} : { body: {} });
      expect([200, 400, 401], `${name} ${method} ${path}`).toContain(res.status);
    }
  });

  it('the OpenAPI document is valid OpenAPI 3.1 and holds every operation of the table', async () => {
    const res = await server.request('GET', '/api/ac/openapi.json');
    expect(res.status).toBe(200);
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.0.0');
    expect(res.body.servers).toEqual([{ url: server.url }]);
    for (const op of restOperations(server.running.service.operations)) {
      const entry = res.body.paths[op.http.path]?.[op.http.method.toLowerCase()];
      expect(entry, `${op.name}`).toBeDefined();
      expect(entry.operationId).toBe(op.name);
    }
    const ids = Object.values(
      res.body.paths as Record<string, Record<string, { operationId: string }>>,
    ).flatMap((p) => Object.values(p).map((o) => o.operationId));
    for (const name of SPEC_OPERATIONS) expect(ids).toContain(name);
    const store = res.body.paths['/api/ac/memory'].post;
    expect(store.requestBody.content['application/json'].schema.required).toEqual([
      'agent_key',
      'memory_key',
      'memory_value',
    ]);
    expect(Object.keys(store.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '402', '403', '409', '413', '415', '422', '500']),
    );
    expect(store.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
      'header:Idempotency-Key',
      'header:If-Match',
      'header:If-None-Match',
    ]);
    const retrieve = res.body.paths['/api/ac/memory'].get;
    expect(retrieve.parameters.map((p: { name: string }) => p.name)).toEqual([
      'Idempotency-Key',
      'agent_key',
      'memory_key',
      'refresh_on_read',
    ]);
    // Free operations that change nothing take no idempotency key.
    expect(res.body.paths['/api/ac/account'].get.parameters ?? []).not.toContainEqual(
      expect.objectContaining({ name: 'Idempotency-Key' }),
    );
    expect(Object.keys(retrieve.responses)).toContain('404');
  });

  it('honours PUBLIC_URL in the discovery documents', async () => {
    const behind = await startTestServer({
      env: { PUBLIC_URL: 'https://ac.example.com/' },
      live: new FakeLiveSource(),
    });
    try {
      const doc = await behind.request('GET', '/api/ac/openapi.json');
      expect(doc.body.servers).toEqual([{ url: 'https://ac.example.com' }]);
      const manifest = await behind.request('GET', '/.well-known/ai-plugin.json');
      expect(manifest.body.api.url).toBe('https://ac.example.com/api/ac/openapi.json');
      const llms = await behind.request('GET', '/api/ac/llms.txt');
      expect(llms.text).toContain('Base URL: https://ac.example.com.');
    } finally {
      await behind.close();
    }
  });

  it('real responses match the schemas the OpenAPI document publishes', async () => {
    const doc = (await server.request('GET', '/api/ac/openapi.json')).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const check = (path: string, method: string, status: string, body: unknown) => {
      const response = doc.paths[path][method].responses[status];
      const schema = response.content['application/json'].schema;
      const resolved = schema.$ref ? doc.components.schemas.Error : schema;
      const ok = ajv.validate(resolved, body);
      expect(ok, `${method} ${path} ${status}: ${ajv.errorsText()}`).toBe(true);
    };
    const reg = await server.request('POST', '/api/ac/register', { body: { email: 'schema@example.com' } });
    check('/api/ac/register', 'post', '200', reg.body);
    const key = reg.body.agent_key;
    const auth = { key };
    const stored = await server.request('POST', '/api/ac/memory', {
      ...auth,
      body: { agent_key: key, memory_key: 'k', memory_value: 'v', metadata: { a: 1 } },
    });
    check('/api/ac/memory', 'post', '200', stored.body);
    check(
      '/api/ac/memory',
      'get',
      '200',
      (await server.request('GET', '/api/ac/memory', { ...auth, query: { agent_key: key, memory_key: 'k' } }))
        .body,
    );
    check(
      '/api/ac/memory/search',
      'post',
      '200',
      (await server.request('POST', '/api/ac/memory/search', { ...auth, body: { agent_key: key } })).body,
    );
    check(
      '/api/ac/data',
      'post',
      '200',
      (
        await server.request('POST', '/api/ac/data', {
          ...auth,
          body: { agent_key: key, query_type: 'news', query: 'x' },
        })
      ).body,
    );
    check('/api/ac/account', 'get', '200', (await server.request('GET', '/api/ac/account', auth)).body);
    check(
      '/api/ac/account/transactions',
      'get',
      '200',
      (await server.request('GET', '/api/ac/account/transactions', auth)).body,
    );
    check(
      '/api/ac/memory',
      'delete',
      '200',
      (
        await server.request('DELETE', '/api/ac/memory', {
          ...auth,
          body: { agent_key: key, memory_key: 'k' },
        })
      ).body,
    );
    check(
      '/api/ac/memory',
      'get',
      '404',
      (await server.request('GET', '/api/ac/memory', { ...auth, query: { agent_key: key, memory_key: 'k' } }))
        .body,
    );
    check('/api/ac/ping', 'get', '200', (await server.request('GET', '/api/ac/ping')).body);
  });

  it('llms.txt describes every agent operation, its cost and its fields', async () => {
    const res = await server.request('GET', '/api/ac/llms.txt');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    for (const name of SPEC_OPERATIONS) expect(res.text).toContain(`### ${name}`);
    expect(res.text).toContain('POST /api/ac/memory (cost: 1 cents)');
    expect(res.text).toContain('POST /api/ac/data (cost: 2 fresh, 0 cached cents)');
    expect(res.text).toContain('- memory_key (string, required)');
    expect(res.text).toContain('- query_type ("news" | "search" | "weather" | "price", required)');
    expect(res.text).not.toContain('admin');
  });

  it('publishes the plugin manifest with schema version v1', async () => {
    const res = await server.request('GET', '/.well-known/ai-plugin.json');
    expect(res.status).toBe(200);
    expect(res.body.schema_version).toBe('v1');
    expect(res.body.api).toEqual({
      type: 'openapi',
      url: `${server.url}/api/ac/openapi.json`,
      is_user_authenticated: false,
    });
  });
});
