/**
 * The hostile-input catalogue (issue 6), against the real server over raw HTTP: every row is refused with a
 * JSON 4xx whose `error` says what to do and whose `code` is stable; afterwards the process still answers,
 * and the agent the catalogue ran as has the same balance, ledger and memories as before. Inputs that are
 * odd but valid (`__proto__` as a key, NUL in a value, a repeated JSON key) are accepted exactly as the
 * README documents, without polluting any prototype. Slow clients get a JSON 408.
 */
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import {
  exchange,
  type RawRequest,
  type RawResponse,
  rawRequest,
  requestBytes,
  sleep,
  trickle,
} from '../helpers/raw-http.js';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';

const BODY_LIMIT = 256 * 1024;

function expectJsonError(res: RawResponse, status: number, code: string, mentions?: RegExp): void {
  expect(res.status, res.raw.slice(0, 600)).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/u);
  expect(res.body, res.text.slice(0, 300)).toBeTypeOf('object');
  expect(typeof res.body.error).toBe('string');
  // One sentence, of a readable length, that names what was wrong and what to do.
  expect(res.body.error.length).toBeGreaterThan(20);
  expect(res.body.error.length).toBeLessThan(400);
  expect(res.body.code).toBe(code);
  expect(res.text).not.toMatch(/at .+\.(ts|js):\d+/u); // no stack trace
  if (mentions) expect(res.body.error).toMatch(mentions);
}

/** A JSON text nested `depth` levels deep, e.g. [[[1]]]. */
const nestedArrays = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

interface Row {
  name: string;
  /** The request, built for the agent's key, or raw bytes as a string. */
  request: ((key: string) => RawRequest | Buffer) | string;
  status: number;
  code: string;
  mentions?: RegExp;
  field?: string;
  /** Further checks on the answer. */
  check?: (res: RawResponse) => void;
}

describe('hostile input over HTTP', () => {
  let server: TestServer;
  /** The agent every hostile request is sent as. */
  let key: string;
  let agentId: string;
  let before: { balance: number; ledger: unknown; memories: number };

  const account = async (k: string) => server.running.service.core.accounts.authenticate(k);
  const snapshot = async () => {
    const a = await account(key);
    const store = server.running.service.store;
    return {
      balance: a.balanceCents,
      ledger: await store.read((r) => r.listLedger(agentId, 1000)),
      memories: await store.read((r) => r.countMemories(agentId)),
    };
  };

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
    key = await server.register();
    agentId = (await account(key)).id;
    // One memory and one paid call in the ledger, so "unchanged" is not trivially true.
    const stored = await server.request('POST', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: 'existing', memory_value: 'v' },
    });
    expect(stored.status).toBe(200);
    before = await snapshot();
    expect(before).toMatchObject({ balance: 49, memories: 1 });
  });
  afterAll(() => server.close());

  /** A POST of `body` (text, sent as is) with the agent's key and JSON content type unless overridden. */
  const post = (
    path: string,
    body: string | Buffer,
    headers: Record<string, string> = {},
    k: string = key,
  ): RawRequest => ({
    method: 'POST',
    path,
    headers: { 'X-API-Key': k, 'Content-Type': 'application/json', ...headers },
    body,
  });
  const get = (path: string, k: string = key): RawRequest => ({
    path,
    headers: { 'X-API-Key': k },
  });
  /** A store request whose body is `{agent_key, ...fields}` written as raw JSON members. */
  const store = (k: string, members: string) =>
    post('/api/ac/memory', `{"agent_key":${JSON.stringify(k)},${members}}`);
  const jsonStore = (k: string, fields: Record<string, unknown>) =>
    post('/api/ac/memory', JSON.stringify({ agent_key: k, ...fields }));

  const catalogue: Row[] = [
    // Bodies over the limit, also once decompressed.
    {
      name: 'a JSON body over the limit',
      request: (k) => jsonStore(k, { memory_key: 'big', memory_value: 'x'.repeat(BODY_LIMIT + 10) }),
      status: 413,
      code: 'payload_too_large',
      mentions: /262144 bytes/u,
      check: (res) => expect(res.body.limit_bytes).toBe(BODY_LIMIT),
    },
    {
      name: 'a chunked body over the limit',
      request: (k) => ({
        ...post('/api/ac/memory', ''),
        headers: { 'X-API-Key': k, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        body: `${(300_000).toString(16)}\r\n${'x'.repeat(300_000)}\r\n0\r\n\r\n`,
      }),
      status: 413,
      code: 'payload_too_large',
    },
    {
      name: 'a gzip body of 2 KB that inflates past the limit (a small zip bomb)',
      request: (k) =>
        post(
          '/api/ac/memory',
          gzipSync(JSON.stringify({ agent_key: k, memory_key: 'b', memory_value: 'x'.repeat(2_000_000) })),
          { 'Content-Encoding': 'gzip' },
        ),
      status: 413,
      code: 'payload_too_large',
      mentions: /262144 bytes/u,
    },
    {
      name: 'a deflate body that inflates past the limit',
      request: (k) =>
        post(
          '/api/ac/memory',
          deflateSync(JSON.stringify({ agent_key: k, memory_key: 'b', memory_value: 'y'.repeat(1_000_000) })),
          { 'Content-Encoding': 'deflate' },
        ),
      status: 413,
      code: 'payload_too_large',
    },
    {
      name: 'a brotli body that inflates past the limit',
      request: (k) =>
        post(
          '/api/ac/memory',
          brotliCompressSync(
            JSON.stringify({ agent_key: k, memory_key: 'b', memory_value: 'z'.repeat(1e6) }),
          ),
          { 'Content-Encoding': 'br' },
        ),
      status: 413,
      code: 'payload_too_large',
    },
    {
      name: 'Content-Encoding: gzip on a body that is not gzip',
      request: () => post('/api/ac/memory', '{"not": "gzip"}', { 'Content-Encoding': 'gzip' }),
      status: 400,
      code: 'invalid_input',
      mentions: /not valid gzip.*uncompressed/u,
    },
    {
      name: 'an unsupported Content-Encoding',
      request: () => post('/api/ac/memory', '{}', { 'Content-Encoding': 'compress' }),
      status: 415,
      code: 'unsupported_media_type',
      mentions: /UTF-8 JSON/u,
    },
    {
      name: 'an unsupported charset',
      request: () => post('/api/ac/memory', '{}', { 'Content-Type': 'application/json; charset=latin1' }),
      status: 415,
      code: 'unsupported_media_type',
    },
    // Malformed JSON and JSON that is not an object.
    {
      name: 'malformed JSON',
      request: () => post('/api/ac/memory', '{"memory_key": '),
      status: 400,
      code: 'invalid_json',
      mentions: /not valid JSON/u,
    },
    {
      name: 'JSON with trailing garbage',
      request: (k) => post('/api/ac/memory', `{"agent_key":"${k}"} {"x":1}`),
      status: 400,
      code: 'invalid_json',
    },
    {
      name: 'single-quoted pseudo-JSON',
      request: () => post('/api/ac/memory', "{'memory_key': 'a'}"),
      status: 400,
      code: 'invalid_json',
    },
    {
      name: 'a JSON array as the body',
      request: () => post('/api/ac/memory', '[{"memory_key": "a"}]'),
      status: 400,
      code: 'invalid_input',
      mentions: /JSON object/u,
    },
    {
      name: 'null as the body',
      request: () => post('/api/ac/memory', 'null'),
      status: 400,
      code: 'invalid_json',
      mentions: /JSON object/u,
    },
    {
      name: 'a number as the body',
      request: () => post('/api/ac/memory', '42'),
      status: 400,
      code: 'invalid_json',
    },
    {
      name: 'a string as the body',
      request: () => post('/api/ac/memory', '"memory_key"'),
      status: 400,
      code: 'invalid_json',
    },
    {
      name: 'an empty body',
      request: () => post('/api/ac/memory', ''),
      status: 400,
      code: 'invalid_input',
      field: 'agent_key',
      mentions: /agent_key is required in the body/u,
    },
    // Wrong Content-Type.
    {
      name: 'Content-Type text/plain',
      request: () => post('/api/ac/memory', '{}', { 'Content-Type': 'text/plain' }),
      status: 415,
      code: 'unsupported_media_type',
      mentions: /Content-Type: application\/json \(got text\/plain\)/u,
    },
    {
      name: 'a body without Content-Type',
      request: (k) => ({ method: 'POST', path: '/api/ac/memory', headers: { 'X-API-Key': k }, body: '{}' }),
      status: 415,
      code: 'unsupported_media_type',
      mentions: /got none/u,
    },
    {
      name: 'a form body',
      request: () =>
        post('/api/ac/memory', 'memory_key=a&memory_value=b', {
          'Content-Type': 'application/x-www-form-urlencoded',
        }),
      status: 415,
      code: 'unsupported_media_type',
    },
    {
      name: 'a multipart body',
      request: () =>
        post('/api/ac/memory', '--b\r\n\r\n{}\r\n--b--\r\n', {
          'Content-Type': 'multipart/form-data; boundary=b',
        }),
      status: 415,
      code: 'unsupported_media_type',
    },
    {
      name: 'a DELETE with a text body',
      request: (k) => ({
        method: 'DELETE',
        path: '/api/ac/memory',
        headers: { 'X-API-Key': k, 'Content-Type': 'text/plain' },
        body: 'existing',
      }),
      status: 415,
      code: 'unsupported_media_type',
    },
    // Fields of the wrong type.
    {
      name: 'memory_key as a number',
      request: (k) => jsonStore(k, { memory_key: 5, memory_value: 'v' }),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
      mentions: /memory_key must be of type string/u,
    },
    {
      name: 'memory_value as an object',
      request: (k) => jsonStore(k, { memory_key: 'k', memory_value: { text: 'v' } }),
      status: 400,
      code: 'invalid_input',
      field: 'memory_value',
    },
    {
      name: 'memory_type as an array',
      request: (k) => jsonStore(k, { memory_key: 'k', memory_value: 'v', memory_type: ['fact'] }),
      status: 400,
      code: 'invalid_input',
      field: 'memory_type',
    },
    {
      name: 'metadata as a string',
      request: (k) => jsonStore(k, { memory_key: 'k', memory_value: 'v', metadata: '{"a":1}' }),
      status: 400,
      code: 'invalid_input',
      field: 'metadata',
      mentions: /metadata must be a JSON object/u,
    },
    {
      name: 'metadata as an array',
      request: (k) => jsonStore(k, { memory_key: 'k', memory_value: 'v', metadata: [{ a: 1 }] }),
      status: 400,
      code: 'invalid_input',
      field: 'metadata',
    },
    {
      name: 'metadata as null',
      request: (k) => jsonStore(k, { memory_key: 'k', memory_value: 'v', metadata: null }),
      status: 400,
      code: 'invalid_input',
      field: 'metadata',
    },
    {
      name: 'limit as a numeric string in a JSON body',
      request: (k) => post('/api/ac/memory/search', JSON.stringify({ agent_key: k, limit: '5' })),
      status: 400,
      code: 'invalid_input',
      field: 'limit',
      mentions: /limit must be a number/u,
    },
    {
      name: 'cache_minutes as a boolean',
      request: (k) =>
        post(
          '/api/ac/data',
          JSON.stringify({ agent_key: k, query_type: 'news', query: 'q', cache_minutes: true }),
        ),
      status: 400,
      code: 'invalid_input',
      field: 'cache_minutes',
    },
    {
      name: 'query as an object',
      request: (k) =>
        post('/api/ac/data', JSON.stringify({ agent_key: k, query_type: 'news', query: { q: 1 } })),
      status: 400,
      code: 'invalid_input',
      field: 'query',
    },
    {
      name: 'agent_key as a number',
      request: () =>
        post('/api/ac/memory', JSON.stringify({ agent_key: 42, memory_key: 'k', memory_value: 'v' })),
      status: 400,
      code: 'invalid_input',
      field: 'agent_key',
      mentions: /agent_key must be a string/u,
    },
    {
      name: 'email as a number at registration',
      request: () => post('/api/ac/register', '{"email": 12345}'),
      status: 400,
      code: 'invalid_input',
      field: 'email',
    },
    // __proto__, constructor and prototype as field names: unknown fields, refused by name.
    {
      name: '__proto__ as a body field',
      request: (k) => store(k, '"memory_key":"p","memory_value":"v","__proto__":{"memory_type":"fact"}'),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) __proto__; allowed fields: agent_key, memory_key/u,
    },
    {
      name: '__proto__ carrying a required field',
      request: (k) => store(k, '"__proto__":{"memory_key":"smuggled"},"memory_value":"v"'),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
      mentions: /memory_key is required/u,
    },
    {
      name: 'constructor as a body field',
      request: (k) => store(k, '"memory_key":"p","memory_value":"v","constructor":{"prototype":{"x":1}}'),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) constructor/u,
    },
    {
      name: 'prototype as a body field',
      request: (k) => store(k, '"memory_key":"p","memory_value":"v","prototype":{"x":1}'),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) prototype/u,
    },
    {
      name: '__proto__ at registration',
      request: () => post('/api/ac/register', '{"email":"proto@example.com","__proto__":{"plan":"free"}}'),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) __proto__/u,
    },
    {
      name: '__proto__ as a query parameter',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&memory_key=existing&__proto__=x`),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) __proto__/u,
    },
    {
      name: '__proto__[polluted] as a query parameter',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&memory_key=existing&__proto__%5Bpolluted%5D=1`),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) __proto__\[polluted\]/u,
    },
    {
      name: 'constructor as a query parameter',
      request: (k) => get(`/api/ac/account/transactions?agent_key=${k}&constructor=x`),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) constructor/u,
    },
    // Lone surrogates: refused everywhere (they have no UTF-8 form).
    {
      name: 'a lone surrogate in memory_key',
      request: (k) => store(k, '"memory_key":"a\\ud800b","memory_value":"v"'),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
      mentions: /lone UTF-16 surrogate.*well-formed UTF-8/u,
    },
    {
      name: 'lone surrogates in two fields: the first in the input is named',
      request: (k) => store(k, '"memory_key":"a\\ud800","memory_value":"\\udc00"'),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
    },
    {
      name: 'a lone low surrogate in memory_value',
      request: (k) => store(k, '"memory_key":"k","memory_value":"\\udc00"'),
      status: 400,
      code: 'invalid_input',
      field: 'memory_value',
    },
    {
      name: 'reversed surrogates in memory_value',
      request: (k) => store(k, '"memory_key":"k","memory_value":"\\ude00\\ud83d"'),
      status: 400,
      code: 'invalid_input',
      field: 'memory_value',
    },
    {
      name: 'a lone surrogate inside metadata',
      request: (k) => store(k, '"memory_key":"k","memory_value":"v","metadata":{"list":["ok","\\ud83d"]}'),
      status: 400,
      code: 'invalid_input',
      field: 'metadata.list.1',
    },
    {
      name: 'a lone surrogate in a metadata key',
      request: (k) => store(k, '"memory_key":"k","memory_value":"v","metadata":{"n":{"\\udfff":1}}'),
      status: 400,
      code: 'invalid_input',
      field: 'metadata.n',
      mentions: /has a key that holds a lone UTF-16 surrogate/u,
    },
    {
      name: 'a lone surrogate in a live-data query',
      request: (k) => post('/api/ac/data', `{"agent_key":"${k}","query_type":"news","query":"x\\ud800"}`),
      status: 400,
      code: 'invalid_input',
      field: 'query',
    },
    {
      name: 'a lone surrogate in a registration name',
      request: () => post('/api/ac/register', '{"email":"surrogate@example.com","name":"\\ud800"}'),
      status: 400,
      code: 'invalid_input',
      field: 'name',
    },
    // NUL and bidi controls in keys and queries.
    {
      name: 'NUL in memory_key',
      request: (k) => store(k, '"memory_key":"a\\u0000b","memory_value":"v"'),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
      mentions: /control characters/u,
    },
    {
      name: 'NUL in memory_key as %00 in the query string',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&memory_key=a%00b`),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
      mentions: /control characters/u,
    },
    {
      name: 'a right-to-left override (U+202E) in memory_key',
      request: (k) => store(k, '"memory_key":"invoice\\u202etxt.exe","memory_value":"v"'),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
      mentions: /bidirectional formatting characters/u,
    },
    {
      name: 'a bidi isolate (U+2066) in memory_key, raw UTF-8',
      request: (k) => store(k, '"memory_key":"a\u2066b","memory_value":"v"'),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
      mentions: /bidirectional/u,
    },
    {
      name: 'a bidi mark in memory_key as %E2%80%8F in the query string',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&memory_key=a%E2%80%8Fb`),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
    },
    {
      name: 'NUL in a live-data query',
      request: (k) =>
        post('/api/ac/data', `{"agent_key":"${k}","query_type":"weather","query":"Berlin\\u0000"}`),
      status: 400,
      code: 'invalid_input',
      field: 'query',
      mentions: /query must not contain control characters/u,
    },
    // Very deep nesting: refused without a stack overflow.
    {
      name: 'metadata nested 100,000 arrays deep',
      request: (k) =>
        store(k, `"memory_key":"d","memory_value":"v","metadata":{"a":${nestedArrays(100_000)}}`),
      status: 400,
      code: 'invalid_input',
      field: 'metadata',
      mentions: /nest deeper than 32/u,
    },
    {
      name: 'metadata nested 40,000 objects deep',
      request: (k) => store(k, `"memory_key":"d","memory_value":"v","metadata":${nestedObjects(40_000)}`),
      status: 400,
      code: 'invalid_input',
      field: 'metadata',
      mentions: /nest deeper than 32/u,
    },
    {
      name: 'memory_value nested 100,000 deep',
      request: (k) => store(k, `"memory_key":"d","memory_value":${nestedArrays(100_000)}`),
      status: 400,
      code: 'invalid_input',
      field: 'memory_value',
    },
    {
      name: 'an unknown field nested 100,000 deep',
      request: (k) => store(k, `"memory_key":"d","memory_value":"v","junk":${nestedArrays(100_000)}`),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) junk/u,
    },
    // Unknown fields.
    {
      name: 'a misspelt field',
      request: (k) => jsonStore(k, { memory_key: 'k', memory_value: 'v', memory_tyep: 'fact' }),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) memory_tyep; allowed fields: agent_key, memory_key, memory_value/u,
    },
    {
      name: 'an unknown query parameter',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&memory_key=existing&format=xml`),
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) format/u,
    },
    {
      name: '5,000 long unknown fields: named, but in a bounded sentence',
      request: (k) => {
        const junk = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`${'f'.repeat(30)}${i}`, 1]));
        return jsonStore(k, { memory_key: 'k', memory_value: 'v', ...junk });
      },
      status: 400,
      code: 'invalid_input',
      mentions: /unknown field\(s\) f+0, .* and 4995 more; allowed fields/u,
    },
    // Duplicated and malformed query parameters.
    {
      name: 'memory_key given twice',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&memory_key=a&memory_key=b`),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
      mentions: /memory_key must be of type string/u,
    },
    {
      name: 'agent_key given twice',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&agent_key=${k}&memory_key=existing`),
      status: 400,
      code: 'invalid_input',
      field: 'agent_key',
    },
    {
      name: 'limit given twice',
      request: (k) => get(`/api/ac/account/transactions?agent_key=${k}&limit=5&limit=6`),
      status: 400,
      code: 'invalid_input',
      field: 'limit',
      mentions: /limit must be a number/u,
    },
    {
      name: 'memory_key[] array syntax',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&memory_key[]=existing`),
      status: 400,
      code: 'invalid_input',
      field: 'memory_key',
    },
    {
      name: 'a malformed escape %ZZ in memory_key stays literal (404, free)',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&memory_key=%ZZ`),
      status: 404,
      code: 'not_found',
      check: (res) => expect(res.body.memory_key).toBe('%ZZ'),
    },
    {
      name: 'a truncated UTF-8 escape in memory_key decodes to U+FFFD (404, free)',
      request: (k) => get(`/api/ac/memory?agent_key=${k}&memory_key=%E0%A4%A`),
      status: 404,
      code: 'not_found',
      check: (res) => expect(res.body.memory_key).toBe('\ufffd%A'),
    },
    {
      name: 'a malformed escape in agent_key',
      request: () => get(`/api/ac/memory?agent_key=%ZZ&memory_key=existing`),
      status: 403,
      code: 'forbidden',
      field: 'agent_key',
    },
    // Bad percent-encoding in the path: no route matches.
    {
      name: 'a truncated escape in the path',
      request: () => get('/api/ac/%E0%A4%A'),
      status: 404,
      code: 'not_found',
      mentions: /openapi\.json/u,
    },
    {
      name: 'an invalid escape in the path',
      request: () => get('/api/ac/memory%ZZ'),
      status: 404,
      code: 'not_found',
    },
    {
      name: 'an encoded slash and dot segments in the path',
      request: () => get('/api/ac/%2e%2e/%2e%2e/etc/passwd'),
      status: 404,
      code: 'not_found',
    },
    // Headers and request lines the HTTP parser refuses.
    {
      name: 'one header of 20 KB',
      request: (k) => get(`/api/ac/account?x=${'a'.repeat(10)}`, `${k}${'k'.repeat(20_000)}`),
      status: 431,
      code: 'headers_too_large',
      mentions: /too large.*send fewer or shorter headers/u,
    },
    {
      name: '600 headers',
      request: (k) => ({
        path: '/api/ac/account',
        headers: {
          'X-API-Key': k,
          ...Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`X-Filler-${i}`, 'v'.repeat(30)])),
        },
      }),
      status: 431,
      code: 'headers_too_large',
    },
    {
      name: 'a URL of 20 KB',
      request: () => get(`/api/ac/ping?${'q'.repeat(20_000)}`),
      status: 431,
      code: 'headers_too_large',
    },
    {
      name: 'NUL in a header value',
      request: 'GET /api/ac/ping HTTP/1.1\r\nHost: x\r\nX-Api-Key: a\u0000b\r\n\r\n',
      status: 400,
      code: 'invalid_input',
      mentions: /could not be parsed as HTTP/u,
    },
    {
      name: 'a request line that is not HTTP',
      request: 'HELLO THERE\r\n\r\n',
      status: 400,
      code: 'invalid_input',
    },
    {
      name: 'an unknown HTTP version',
      request: 'GET /api/ac/ping HTTP/9.9\r\nHost: x\r\n\r\n',
      status: 400,
      code: 'invalid_input',
    },
    {
      name: 'an unknown method',
      request: 'FROB /api/ac/ping HTTP/1.1\r\nHost: x\r\n\r\n',
      status: 400,
      code: 'invalid_input',
    },
    {
      name: 'Content-Length and Transfer-Encoding together (request smuggling)',
      request:
        'POST /api/ac/memory HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      status: 400,
      code: 'invalid_input',
    },
    {
      name: 'two different Content-Length headers',
      request: 'POST /api/ac/memory HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x',
      status: 400,
      code: 'invalid_input',
    },
    {
      name: 'a Content-Length that is not a number',
      request: 'POST /api/ac/memory HTTP/1.1\r\nHost: x\r\nContent-Length: 1e3\r\n\r\n{}',
      status: 400,
      code: 'invalid_input',
    },
    {
      name: 'a header name with a space',
      request: 'GET /api/ac/ping HTTP/1.1\r\nHost: x\r\nX Bad: 1\r\n\r\n',
      status: 400,
      code: 'invalid_input',
    },
    {
      name: 'a key of 10 KB',
      request: (k) => get('/api/ac/account', `${k}${'k'.repeat(10_000)}`),
      status: 401,
      code: 'unauthorized',
    },
    {
      name: 'X-API-Key and Bearer carrying different keys',
      request: (k) => ({
        path: '/api/ac/account',
        headers: { 'X-API-Key': k, Authorization: 'Bearer ac_other' },
      }),
      status: 400,
      code: 'invalid_input',
      mentions: /different keys/u,
    },
    {
      name: 'a method the path does not offer',
      request: (k) => ({ ...post('/api/ac/memory', '{}', {}, k), method: 'PUT' }),
      status: 405,
      code: 'method_not_allowed',
      check: (res) => expect(res.headers.allow).toBe('POST, GET, DELETE'),
    },
  ];

  for (const row of catalogue) {
    it(`${row.name}: ${row.status} ${row.code}`, async () => {
      const res = await rawRequest(
        server.url,
        typeof row.request === 'string' ? row.request : row.request(key),
      );
      expectJsonError(res, row.status, row.code, row.mentions);
      if (row.field !== undefined) expect(res.body.field).toBe(row.field);
      row.check?.(res);
    });
  }

  describe('odd but valid input, accepted as documented', () => {
    let other: string;
    let otherKey: string;
    const paid: string[] = [];
    beforeAll(async () => {
      other = await server.register();
      otherKey = await server.register();
    });
    const send = async (req: RawRequest) => rawRequest(server.url, req);
    const storeAs = async (k: string, body: string) => {
      const res = await send(post('/api/ac/memory', body, {}, k));
      expect(res.status, res.text).toBe(200);
      paid.push('memory_store');
      return res;
    };
    const retrieveAs = async (k: string, memoryKey: string) =>
      send(get(`/api/ac/memory?agent_key=${k}&memory_key=${encodeURIComponent(memoryKey)}`, k));

    it('__proto__, constructor, prototype and toString are ordinary memory keys, per agent', async () => {
      for (const name of ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty']) {
        const res = await storeAs(
          other,
          `{"agent_key":"${other}","memory_key":"${name}","memory_value":"is ${name}"}`,
        );
        expect(res.body.created).toBe(true);
        const got = await retrieveAs(other, name);
        paid.push('memory_retrieve');
        expect(got.status).toBe(200);
        expect(got.body.memory).toMatchObject({ memory_key: name, memory_value: `is ${name}` });
        // A second agent does not see it.
        const theirs = await retrieveAs(otherKey, name);
        expectJsonError(theirs, 404, 'not_found');
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('__proto__ and constructor inside metadata are kept as ordinary keys, polluting nothing', async () => {
      const metadata =
        '{"__proto__":{"polluted":true,"isAdmin":true},"constructor":{"prototype":{"polluted":true}},' +
        '"prototype":{"polluted":true},"nested":{"__proto__":{"polluted":true}}}';
      await storeAs(
        other,
        `{"agent_key":"${other}","memory_key":"meta","memory_value":"v","metadata":${metadata}}`,
      );
      const got = await retrieveAs(other, 'meta');
      paid.push('memory_retrieve');
      expect(got.status).toBe(200);
      // Parsed the same way the server parsed it, the metadata is exactly what was sent, own keys included.
      expect(JSON.stringify(got.body.memory.metadata)).toBe(JSON.stringify(JSON.parse(metadata)));
      expect(Object.keys(got.body.memory.metadata)).toEqual([
        '__proto__',
        'constructor',
        'prototype',
        'nested',
      ]);
      expect(got.text).toContain('"__proto__":{"polluted":true,"isAdmin":true}');
      const probe: Record<string, unknown> = {};
      expect(probe.polluted).toBeUndefined();
      expect(probe.isAdmin).toBeUndefined();
      expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
      // The account is untouched: the plan did not become "isAdmin", the other agent has no such memory.
      const otherAccount = await server.request('GET', '/api/ac/account', { key: other });
      expect(otherAccount.body).not.toHaveProperty('isAdmin');
      expectJsonError(await retrieveAs(otherKey, 'meta'), 404, 'not_found');
    });

    it('NUL, bidi controls and other code points in memory_value and metadata round-trip exactly', async () => {
      const value = 'nul:\u0000 rlo:\u202e isolate:\u2066x\u2069 bom:\ufeff emoji:😀 zwj:👩‍💻 cr-lf:\r\n';
      const metadata = { 'key\u0000with-nul': 'value\u202e', deep: ['\u0000', { '\u2067': '😀' }] };
      await storeAs(
        other,
        JSON.stringify({ agent_key: other, memory_key: 'exact', memory_value: value, metadata }),
      );
      const got = await retrieveAs(other, 'exact');
      paid.push('memory_retrieve');
      expect(got.body.memory.memory_value).toBe(value);
      expect(got.body.memory.metadata).toEqual(metadata);
    });

    it('a repeated JSON member: the last one wins, as in JSON.parse', async () => {
      await storeAs(
        other,
        `{"agent_key":"${other}","memory_key":"first","memory_key":"last","memory_value":"v"}`,
      );
      expect((await retrieveAs(other, 'last')).status).toBe(200);
      paid.push('memory_retrieve');
      expectJsonError(await retrieveAs(other, 'first'), 404, 'not_found');
    });

    it('a key made of emoji and surrogate pairs (well-formed) is fine', async () => {
      await storeAs(
        other,
        JSON.stringify({ agent_key: other, memory_key: '😀\ud83d\ude00𝄞', memory_value: 'v' }),
      );
      const got = await retrieveAs(other, '😀😀𝄞');
      paid.push('memory_retrieve');
      expect(got.status).toBe(200);
    });

    it('charges exactly the calls that succeeded, and no other agent', async () => {
      const res = await server.request('GET', '/api/ac/account', { key: other });
      expect(res.body.credit_balance_cents).toBe(50 - paid.length);
      expect(await ledgerSum(server, other)).toBe(50 - paid.length);
      expect(
        (await server.request('GET', '/api/ac/account', { key: otherKey })).body.credit_balance_cents,
      ).toBe(50);
    });
  });

  it('after the whole catalogue: the process answers, and the store and the balance are unchanged', async () => {
    const ping = await server.request('GET', '/api/ac/ping');
    expect(ping.status).toBe(200);
    expect(ping.body.status).toBe('ok');
    expect(await snapshot()).toEqual(before);
    expect(await ledgerSum(server, key)).toBe(before.balance);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The existing memory is still there and unchanged (retrieving it costs the usual cent).
    const got = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'existing' },
    });
    expect(got.body).toMatchObject({
      memory: { memory_value: 'v' },
      credit_balance_cents: before.balance - 1,
    });
  });

  it('odd keys survive a restart on the same store', async () => {
    const other = await server.register();
    const body = `{"agent_key":"${other}","memory_key":"__proto__","memory_value":"v","metadata":{"__proto__":{"a":1}}}`;
    expect((await rawRequest(server.url, post('/api/ac/memory', body, {}, other))).status).toBe(200);
    await server.stop();
    const again = await startTestServer({ dataDir: server.dataDir, live: new FakeLiveSource() });
    try {
      const got = await again.request('GET', '/api/ac/memory', {
        key: other,
        query: { agent_key: other, memory_key: '__proto__' },
      });
      expect(got.status).toBe(200);
      expect(got.text).toContain('"metadata":{"__proto__":{"a":1}}');
      expect(Object.keys(got.body.memory.metadata)).toEqual(['__proto__']);
    } finally {
      await again.stop();
    }
  });
});

describe('slow clients get a JSON 408', () => {
  let server: TestServer;
  let key: string;
  const HEADERS_MS = 1000;
  const REQUEST_MS = 2000;

  beforeAll(async () => {
    server = await startTestServer({
      live: new FakeLiveSource(),
      env: { AC_HEADERS_TIMEOUT_MS: String(HEADERS_MS), AC_REQUEST_TIMEOUT_MS: String(REQUEST_MS) },
    });
    key = await server.register();
  });
  afterAll(() => server.close());

  const storeRequest = () =>
    requestBytes({
      method: 'POST',
      path: '/api/ac/memory',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_key: key, memory_key: 'slow', memory_value: 'v' }),
    });
  const headEnd = (bytes: Buffer) => bytes.indexOf('\r\n\r\n') + 4;

  async function timed(send: Parameters<typeof exchange>[1]): Promise<{ res: RawResponse; ms: number }> {
    const started = Date.now();
    const res = await exchange(server.url, send);
    return { res, ms: Date.now() - started };
  }

  it('headers that never finish', async () => {
    const { res, ms } = await timed((s) => {
      s.write('GET /api/ac/ping HTTP/1.1\r\nHost: x\r\n');
    });
    expectJsonError(res, 408, 'request_timeout', /too long.*retry/u);
    expect(ms).toBeGreaterThanOrEqual(HEADERS_MS - 100);
  });

  it('headers trickled one line at a time', async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: 1\r\n`);
    const { res } = await timed((s) =>
      trickle(s, ['GET /api/ac/ping HTTP/1.1\r\nHost: x\r\n', ...lines], 200),
    );
    expectJsonError(res, 408, 'request_timeout');
  });

  it('a body that stops halfway', async () => {
    const bytes = storeRequest();
    const { res, ms } = await timed((s) => {
      s.write(bytes.subarray(0, headEnd(bytes) + 10));
    });
    expectJsonError(res, 408, 'request_timeout');
    expect(ms).toBeGreaterThanOrEqual(REQUEST_MS - 100);
  });

  it('a body trickled one byte at a time', async () => {
    const bytes = storeRequest();
    const head = bytes.subarray(0, headEnd(bytes));
    const body = [...bytes.subarray(headEnd(bytes))].map((b) => Buffer.from([b]));
    const { res } = await timed((s) => trickle(s, [head, ...body], 200));
    expectJsonError(res, 408, 'request_timeout');
  });

  it('a connection that sends nothing is closed', async () => {
    const { res } = await timed(() => undefined);
    // Node counts the headers timeout from the connection's start: nothing sent is answered like slow headers.
    expectJsonError(res, 408, 'request_timeout');
  });

  it('a request split into pieces but sent in time is served, and nothing slow was stored', async () => {
    const bytes = storeRequest();
    const { res } = await timed(async (s) => {
      s.write(bytes.subarray(0, 20));
      await sleep(100);
      s.write(bytes.subarray(20));
    });
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({ created: true, credit_balance_cents: 49 });
    expect((await server.request('GET', '/api/ac/ping')).status).toBe(200);
    expect(await ledgerSum(server, key)).toBe(49);
    const account = await server.running.service.core.accounts.authenticate(key);
    expect(await server.running.service.store.read((r) => r.countMemories(account.id))).toBe(1);
  });
});
