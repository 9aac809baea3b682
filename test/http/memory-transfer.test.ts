/**
 * memory_export and memory_import (issue 15), on REST, on both stores (AC_TEST_STORE=postgres runs this
 * file on PostgreSQL), with the service's clock injected: NDJSON out, streamed, free; NDJSON in, upserted
 * by key with a conflict policy, priced per memory written, all or none, a dry run free.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, request, startTestServer, type TestServer } from '../helpers/test-server.js';

const clock = new ManualClock(Date.parse('2026-11-21T12:00:00.000Z'));
const ADMIN = 'admin-token-for-transfer-tests-0123456789';
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ clock, env: { AC_ADMIN_TOKEN: ADMIN, AC_IMPORT_MAX_BYTES: '2000000' } });
});
afterAll(async () => {
  await server.close();
});

const store = async (key: string, fields: Record<string, unknown>) => {
  const res = await server.request('POST', '/api/ac/memory', { key, body: { agent_key: key, ...fields } });
  if (res.status !== 200) throw new Error(res.text);
  clock.advance(1_000);
};
const exportOf = async (key: string) => {
  const res = await fetch(`${server.url}/api/ac/memory/export`, { headers: { 'X-API-Key': key } });
  const text = await res.text();
  return {
    res,
    text,
    lines: text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l)),
  };
};
const importInto = (key: string, ndjson: string, query: Record<string, string> = {}, headers = {}) =>
  request(server.url, 'POST', '/api/ac/memory/import', {
    key,
    query: { agent_key: key, ...query },
    rawBody: ndjson,
    contentType: 'application/x-ndjson',
    headers,
  });
const balance = async (key: string) =>
  (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;
const ndjson = (lines: object[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

describe('memory_export (REST)', () => {
  it('streams the live memories in key order as NDJSON, with versions and expiry, free', async () => {
    const key = await server.register();
    const other = await server.register();
    await store(other, { memory_key: 'theirs', memory_value: 'not mine' });
    await store(key, { memory_key: 'b', memory_value: 'second', metadata: { n: 1 }, ttl_seconds: 3600 });
    await store(key, { memory_key: 'a', memory_value: 'first\u0000with NUL', memory_type: 'fact' });
    await store(key, { memory_key: 'a', memory_value: 'first again' });
    await store(key, { memory_key: 'gone', memory_value: 'expires', ttl_seconds: 1 });
    clock.advance(2_000);
    const before = await balance(key);
    const { res, lines } = await exportOf(key);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(lines.map((l) => l.memory_key)).toEqual(['a', 'b']);
    expect(lines[0]).toMatchObject({
      memory_value: 'first again',
      version: 2,
      expires_at: null,
      ttl_seconds: null,
    });
    expect(lines[1]).toMatchObject({ metadata: { n: 1 }, version: 1, ttl_seconds: 3600 });
    expect(typeof lines[1].expires_at).toBe('string');
    expect(await balance(key)).toBe(before);
    expect((await exportOf(await server.register())).text).toBe('');
    const noKey = await fetch(`${server.url}/api/ac/memory/export`);
    expect(noKey.status).toBe(401);
  });

  it('streams more than a page and a chunk: 1,200 memories, each once, in order', async () => {
    const key = await server.register('bulk@example.com');
    const topUp = await server.request('POST', '/api/ac/admin/credits', {
      bearer: ADMIN,
      body: { email: 'bulk@example.com', cents: 1200 },
    });
    expect(topUp.status, topUp.text).toBe(200);
    for (let batch = 0; batch < 12; batch++) {
      const memories = Array.from({ length: 100 }, (_, i) => ({
        memory_key: `k${String(batch * 100 + i).padStart(5, '0')}`,
        memory_value: 'x'.repeat(200),
      }));
      const res = await server.request('POST', '/api/ac/memory/batch', {
        key,
        body: { agent_key: key, memories },
      });
      expect(res.status, res.text).toBe(200);
    }
    const { lines } = await exportOf(key);
    expect(lines).toHaveLength(1200);
    expect(lines.map((l) => l.memory_key)).toEqual(lines.map((l) => l.memory_key).sort());
    expect(new Set(lines.map((l) => l.memory_key)).size).toBe(1200);
  });
});

describe('memory_import (REST)', () => {
  it('export then import into a fresh agent gives identical memories, charged per memory', async () => {
    const source = await server.register();
    await store(source, {
      memory_key: 'pref',
      memory_value: 'tabs',
      memory_type: 'preference',
      metadata: { by: 'me' },
    });
    await store(source, { memory_key: 'pref', memory_value: 'spaces', memory_type: 'preference' });
    await store(source, { memory_key: 'note', memory_value: 'a\u0000b 🙂', ttl_seconds: 86_400 });
    const exported = await exportOf(source);
    const target = await server.register();
    const before = await balance(target);
    const res = await importInto(target, exported.text);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      lines: 2,
      created: 2,
      updated: 0,
      price_cents: 2,
      cost_cents: 2,
      dry_run: false,
    });
    expect(await balance(target)).toBe(before - 2);
    expect((await exportOf(target)).text).toBe(exported.text);
    // And the memories answer as they did: the same version as ETag, in the same update order.
    const listed = await server.request('POST', '/api/ac/memory/search', {
      key: target,
      body: { agent_key: target },
    });
    expect(listed.body.memories.map((m: { memory_key: string }) => m.memory_key)).toEqual(['note', 'pref']);
    const pref = await server.request('GET', '/api/ac/memory', {
      key: target,
      query: { agent_key: target, memory_key: 'pref' },
    });
    expect(pref.headers.get('etag')).toBe('"2"');
  });

  it('policies: skip keeps, overwrite replaces, if_newer replaces only older; equal lines are free', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'same', memory_value: 'same' });
    await store(key, { memory_key: 'old', memory_value: 'old' });
    await store(key, { memory_key: 'new', memory_value: 'new' });
    const [same, old, fresh] = ['same', 'old', 'new'].map((k) =>
      exportOf(key).then((e) => e.lines.find((l) => l.memory_key === k)),
    );
    const lines = [
      { ...(await same) },
      { ...(await old), memory_value: 'old, changed', updated_at: '2030-01-01T00:00:00.000Z' },
      { ...(await fresh), memory_value: 'new, but stale', updated_at: '2020-01-01T00:00:00.000Z' },
      { memory_key: 'added', memory_value: 'added' },
      { memory_key: 'expired', memory_value: 'x', expires_at: '2020-01-01T00:00:00Z' },
    ];
    const counts = async (policy: string, dry = true) =>
      (await importInto(key, ndjson(lines), { policy, dry_run: String(dry) })).body;
    const before = await balance(key);
    expect(await counts('skip')).toMatchObject({
      unchanged: 1,
      skipped: 2,
      created: 1,
      expired: 1,
      updated: 0,
      price_cents: 1,
      cost_cents: 0,
    });
    expect(await counts('overwrite')).toMatchObject({
      unchanged: 1,
      updated: 2,
      created: 1,
      skipped: 0,
      price_cents: 3,
    });
    expect(await counts('if_newer')).toMatchObject({
      unchanged: 1,
      updated: 1,
      skipped: 1,
      created: 1,
      price_cents: 2,
    });
    expect(await balance(key)).toBe(before); // dry runs change nothing, charge nothing
    expect((await exportOf(key)).lines.map((l) => l.memory_key)).toEqual(['new', 'old', 'same']);

    const done = await counts('if_newer', false);
    expect(done).toMatchObject({ updated: 1, created: 1, cost_cents: 2 });
    expect(await balance(key)).toBe(before - 2);
    const after = (await exportOf(key)).lines;
    expect(after.find((l) => l.memory_key === 'old')).toMatchObject({
      memory_value: 'old, changed',
      version: 2,
    });
    expect(after.find((l) => l.memory_key === 'new')).toMatchObject({ memory_value: 'new', version: 1 });
    // The same import again: now every line is equal to what is there (or skipped by the policy), free.
    const again = await counts('if_newer', false);
    expect(again).toMatchObject({ created: 0, updated: 0, cost_cents: 0 });
    expect(await balance(key)).toBe(before - 2);
  });

  it('refuses the whole import, free, for a bad line, a balance short of the price, the quota', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'kept', memory_value: 'v' });
    const before = await balance(key);
    const bad = await importInto(key, '{"memory_key": "a", "memory_value": "v"}\n\n{"memory_key": ""}\n');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_input', field: 'ndjson' });
    expect(bad.body.error).toMatch(/line 3: memory_key/);
    const notJson = await importInto(key, '{"memory_key": "a", "memory_value": "v"}\nnot json\n');
    expect(notJson.body.error).toMatch(/line 2 is not JSON/);
    const twice = await importInto(
      key,
      ndjson([
        { memory_key: 'a', memory_value: '1' },
        { memory_key: 'a', memory_value: '2' },
      ]),
    );
    expect(twice.body.error).toMatch(/line 2 repeats memory_key "a"/);
    const policy = await importInto(key, ndjson([{ memory_key: 'a', memory_value: '1' }]), {
      policy: 'merge',
    });
    expect(policy.body).toMatchObject({ code: 'invalid_input', field: 'policy' });

    expect(await balance(key)).toBe(before);
    expect((await exportOf(key)).lines.map((l) => l.memory_key)).toEqual(['kept']);

    // A service with the default 50 cents of starter credit and room for 70 memories per agent.
    const small = await startTestServer({ clock, env: { AC_MEMORIES_PER_AGENT: '70' } });
    try {
      const poor = await small.register();
      const lines = (n: number, prefix: string) =>
        ndjson(Array.from({ length: n }, (_, i) => ({ memory_key: `${prefix}${i}`, memory_value: 'v' })));
      const send = (body: string) =>
        request(small.url, 'POST', '/api/ac/memory/import', {
          key: poor,
          query: { agent_key: poor },
          rawBody: body,
          contentType: 'application/x-ndjson',
        });
      const short = await send(lines(60, 'a'));
      expect(short.status, short.text).toBe(402);
      expect(short.body.code).toBe('insufficient_credits');
      expect((await send(lines(20, 'b'))).body).toMatchObject({ created: 20, cost_cents: 20 });
      const full = await send(lines(51, 'c'));
      expect(full.status, full.text).toBe(403);
      expect(full.body.code).toBe('quota_exceeded');
      const account = await small.request('GET', '/api/ac/account', { key: poor });
      expect(account.body.credit_balance_cents).toBe(30);
      const search = await small.request('POST', '/api/ac/memory/search', {
        key: poor,
        body: { agent_key: poor },
      });
      expect(search.body.total).toBe(20);
    } finally {
      await small.close();
    }
  });

  it('takes NDJSON only, and only on its route; an Idempotency-Key replays', async () => {
    const key = await server.register();
    const json = await server.request('POST', '/api/ac/memory/import', { key, body: { agent_key: key } });
    expect(json.status).toBe(415);
    expect(json.body.error).toMatch(/NDJSON/);
    const elsewhere = await request(server.url, 'POST', '/api/ac/memory', {
      key,
      rawBody: '{"memory_key": "a"}\n',
      contentType: 'application/x-ndjson',
    });
    expect(elsewhere.status).toBe(415);
    const line = ndjson([{ memory_key: 'once', memory_value: 'v' }]);
    const first = await importInto(key, line, {}, { 'Idempotency-Key': 'import-1' });
    const replay = await importInto(key, line, {}, { 'Idempotency-Key': 'import-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
  });
});
