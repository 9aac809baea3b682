/**
 * Memory versions and conditional writes (issue 15) on REST, on both stores (AC_TEST_STORE=postgres runs this
 * file on PostgreSQL): every memory carries a version, sent as its ETag; If-Match / expected_version writes
 * only over that version, If-None-Match: * / create_only only creates; a mismatch is 412 version_conflict
 * with the current version, charges nothing and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

function store(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return server.request('POST', '/api/ac/memory', { key, body: { agent_key: key, ...body }, headers });
}
function retrieve(key: string, memoryKey: string) {
  return server.request('GET', '/api/ac/memory', { key, query: { agent_key: key, memory_key: memoryKey } });
}
function remove(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return server.request('DELETE', '/api/ac/memory', { key, body: { agent_key: key, ...body }, headers });
}
async function balance(key: string): Promise<number> {
  return (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents;
}

describe('memory versions and conditional writes (REST)', () => {
  it('a memory is version 1 when created and one more with each store; store and retrieve send it as ETag', async () => {
    const key = await server.register();
    const first = await store(key, { memory_key: 'plan', memory_value: 'a' });
    expect(first.body.memory.version).toBe(1);
    expect(first.headers.get('etag')).toBe('"1"');
    const second = await store(key, { memory_key: 'plan', memory_value: 'b' });
    expect(second.body.memory.version).toBe(2);
    expect(second.headers.get('etag')).toBe('"2"');
    // The same value again is a change too: a store is a write.
    expect((await store(key, { memory_key: 'plan', memory_value: 'b' })).body.memory.version).toBe(3);
    const read = await retrieve(key, 'plan');
    expect(read.body.memory).toMatchObject({ memory_value: 'b', version: 3 });
    expect(read.headers.get('etag')).toBe('"3"');
    // The delete takes version 4 (a marker in the history); a re-created key goes on from there.
    expect((await remove(key, { memory_key: 'plan' })).status).toBe(200);
    expect((await store(key, { memory_key: 'plan', memory_value: 'c' })).body.memory.version).toBe(5);
    // Search lists versions too.
    const listed = await server.request('POST', '/api/ac/memory/search', { key, body: { agent_key: key } });
    expect(listed.body.memories[0]).toMatchObject({ memory_key: 'plan', version: 5 });
  });

  it('If-Match with the current ETag writes; with an old one it is 412 with current_version, free and unchanged', async () => {
    const key = await server.register();
    const created = await store(key, { memory_key: 'doc', memory_value: 'v1' });
    const etag = created.headers.get('etag') as string;
    const ok = await store(key, { memory_key: 'doc', memory_value: 'v2' }, { 'If-Match': etag });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.memory.version).toBe(2);
    const before = await balance(key);

    // A second writer that read version 1 loses, and learns where the memory is now.
    const stale = await store(key, { memory_key: 'doc', memory_value: 'lost update' }, { 'If-Match': etag });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({
      code: 'version_conflict',
      memory_key: 'doc',
      current_version: 2,
      expected_version: 1,
    });
    expect(stale.body.error).toMatch(/at version 2, not expected_version 1/);
    expect(stale.headers.get('etag')).toBeNull();
    expect(await balance(key)).toBe(before);
    expect(await ledgerSum(server, key)).toBe(before);
    expect((await retrieve(key, 'doc')).body.memory).toMatchObject({ memory_value: 'v2', version: 2 });

    // The same through the body field, and a bare number in the header.
    expect((await store(key, { memory_key: 'doc', memory_value: 'v3', expected_version: 2 })).status).toBe(
      200,
    );
    expect((await store(key, { memory_key: 'doc', memory_value: 'v4' }, { 'If-Match': '3' })).status).toBe(
      200,
    );
  });

  it('If-Match on a key that does not exist is 412 with current_version null, and creates nothing', async () => {
    const key = await server.register();
    const res = await store(key, { memory_key: 'ghost', memory_value: 'x' }, { 'If-Match': '"1"' });
    expect(res.status).toBe(412);
    expect(res.body).toMatchObject({ code: 'version_conflict', current_version: null });
    expect((await retrieve(key, 'ghost')).status).toBe(404);
    expect(await balance(key)).toBe(50);
  });

  it('If-None-Match: * (create_only) creates a new key and refuses an existing one with 412', async () => {
    const key = await server.register();
    const created = await store(key, { memory_key: 'once', memory_value: 'first' }, { 'If-None-Match': '*' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ created: true, memory: { version: 1 } });
    const again = await store(key, { memory_key: 'once', memory_value: 'second' }, { 'If-None-Match': '*' });
    expect(again.status).toBe(412);
    expect(again.body).toMatchObject({ code: 'version_conflict', current_version: 1 });
    const field = await store(key, { memory_key: 'once', memory_value: 'third', create_only: true });
    expect(field.status).toBe(412);
    expect((await retrieve(key, 'once')).body.memory.memory_value).toBe('first');
    expect(await balance(key)).toBe(50 - 1 - 1);
  });

  it('delete with If-Match deletes only that version', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'd', memory_value: '1' });
    await store(key, { memory_key: 'd', memory_value: '2' });
    const stale = await remove(key, { memory_key: 'd' }, { 'If-Match': '"1"' });
    expect(stale.status).toBe(412);
    expect(stale.body).toMatchObject({ code: 'version_conflict', current_version: 2 });
    expect((await retrieve(key, 'd')).status).toBe(200);
    expect((await remove(key, { memory_key: 'd', expected_version: 2 })).status).toBe(200);
    expect((await retrieve(key, 'd')).status).toBe(404);
    // A conditional delete of a key that is gone is 412 too (current_version null): the condition failed.
    expect((await remove(key, { memory_key: 'd' }, { 'If-Match': '"2"' })).body).toMatchObject({
      code: 'version_conflict',
      current_version: null,
    });
  });

  it('bad conditions are 400 naming the header or field, and change nothing', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'k', memory_value: 'v' });
    const cases: [Record<string, unknown>, Record<string, string>, string][] = [
      [{}, { 'If-Match': '*' }, 'If-Match'],
      [{}, { 'If-Match': '"1", "2"' }, 'If-Match'],
      [{}, { 'If-Match': '"0"' }, 'If-Match'],
      [{}, { 'If-None-Match': '"1"' }, 'If-None-Match'],
      [{ expected_version: 2 }, { 'If-Match': '"1"' }, 'expected_version'],
      [{ expected_version: 0 }, {}, 'expected_version'],
      [{ expected_version: 1.5 }, {}, 'expected_version'],
      [{ expected_version: '1' }, {}, 'expected_version'],
      [{ create_only: 'yes' }, {}, 'create_only'],
      [{ create_only: true, expected_version: 1 }, {}, 'create_only'],
    ];
    for (const [body, headers, field] of cases) {
      const res = await store(key, { memory_key: 'k', memory_value: 'changed', ...body }, headers);
      expect(res.status, `${JSON.stringify(body)} ${JSON.stringify(headers)}: ${res.text}`).toBe(400);
      expect(res.body.code).toBe('invalid_input');
      expect(res.body.field, res.text).toBe(field);
    }
    expect((await retrieve(key, 'k')).body.memory).toMatchObject({ memory_value: 'v', version: 1 });
    expect(await balance(key)).toBe(50 - 1 - 1);
  });

  it('a weak If-Match tag never matches a write: 412, free, nothing changed (RFC 9110)', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'k', memory_value: 'v' });
    const res = await store(key, { memory_key: 'k', memory_value: 'changed' }, { 'If-Match': 'W/"1"' });
    expect(res.status, res.text).toBe(412);
    expect(res.body).toMatchObject({ code: 'version_conflict', field: 'If-Match' });
    expect(res.body.error).toMatch(/weak entity tag/);
    expect((await retrieve(key, 'k')).body.memory).toMatchObject({ memory_value: 'v', version: 1 });
    expect(await balance(key)).toBe(50 - 1 - 1);
  });

  it('concurrent writers that all read version 1: exactly one wins, the others get 412 and pay nothing', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'race', memory_value: 'start' });
    const writers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        store(key, { memory_key: 'race', memory_value: `writer ${i}` }, { 'If-Match': '"1"' }),
      ),
    );
    const winners = writers.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(writers.filter((r) => r.status === 412)).toHaveLength(7);
    const final = (await retrieve(key, 'race')).body.memory;
    expect(final).toMatchObject({ version: 2, memory_value: winners[0]?.body.memory.memory_value });
    expect(await balance(key)).toBe(50 - 1 - 1 - 1);
  });

  it('OpenAPI describes the headers, the ETag and the 412', async () => {
    const doc = (await server.request('GET', '/api/ac/openapi.json')).body;
    const post = doc.paths['/api/ac/memory'].post;
    expect(post.parameters.map((p: { name: string }) => p.name)).toEqual([
      'Idempotency-Key',
      'If-Match',
      'If-None-Match',
    ]);
    expect(post.responses['200'].headers.ETag).toBeDefined();
    expect(post.responses['412'].description).toContain('version_conflict');
    expect(doc.paths['/api/ac/memory'].get.responses['200'].headers.ETag).toBeDefined();
    const del = doc.paths['/api/ac/memory'].delete;
    expect(del.parameters.map((p: { name: string }) => p.name)).toContain('If-Match');
    expect(del.responses['412']).toBeDefined();
  });
});
