/**
 * Memory history and restore (issue 15), on REST, on both stores (AC_TEST_STORE=postgres runs this file on
 * PostgreSQL), with the service's clock injected: the last N versions of a key (AC_MEMORY_HISTORY, 3 here)
 * and its deletes, listed newest first (1 cent); a restore brings a version back as a new one, priced as a
 * store, and undoes a delete; a deleted key's history is kept for AC_MEMORY_HISTORY_RETENTION (1h here).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

const clock = new ManualClock();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    clock,
    env: { AC_MEMORY_HISTORY: '3', AC_MEMORY_HISTORY_RETENTION: '1h' },
  });
});
afterAll(async () => {
  await server.close();
});

const body = (key: string, fields: Record<string, unknown>) => ({ key, body: { agent_key: key, ...fields } });
const store = (key: string, fields: Record<string, unknown>) =>
  server.request('POST', '/api/ac/memory', body(key, fields));
const remove = (key: string, memoryKey: string) =>
  server.request('DELETE', '/api/ac/memory', body(key, { memory_key: memoryKey }));
const restore = (key: string, fields: Record<string, unknown>, headers: Record<string, string> = {}) =>
  server.request('POST', '/api/ac/memory/restore', { ...body(key, fields), headers });
const history = (key: string, memoryKey: string, limit?: number) =>
  server.request('GET', '/api/ac/memory/history', {
    key,
    query: { agent_key: key, memory_key: memoryKey, ...(limit ? { limit: String(limit) } : {}) },
  });
const retrieve = (key: string, memoryKey: string) =>
  server.request('GET', '/api/ac/memory', { key, query: { agent_key: key, memory_key: memoryKey } });
const balance = async (key: string) =>
  (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;

describe('memory history and restore (REST)', () => {
  it('lists the last N versions newest first, for 1 cent', async () => {
    const key = await server.register();
    for (const value of ['one', 'two', 'three', 'four']) {
      await store(key, { memory_key: 'doc', memory_value: value, metadata: { v: value } });
      clock.advance(1_000);
    }
    const res = await history(key, 'doc');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ memory_key: 'doc', current_version: 4, cost_cents: 1 });
    // AC_MEMORY_HISTORY=3: versions 4, 3 and 2; version 1 is gone.
    expect(res.body.versions.map((v: { version: number }) => v.version)).toEqual([4, 3, 2]);
    expect(res.body.versions[0]).toEqual({
      version: 4,
      stored_at: new Date(clock.now().getTime() - 1_000).toISOString(),
      deleted: false,
      memory_value: 'four',
      memory_type: 'context',
      metadata: { v: 'four' },
    });
    expect((await history(key, 'doc', 1)).body.versions).toHaveLength(1);
    expect(await balance(key)).toBe(50 - 4 - 1 - 1);
    // The service's own operations need the key in the header only (no key in the URL); a wrong
    // agent_key is still refused.
    const headerOnly = await server.request('GET', '/api/ac/memory/history', {
      key,
      query: { memory_key: 'doc' },
    });
    expect(headerOnly.status, headerOnly.text).toBe(200);
    const wrong = await server.request('GET', '/api/ac/memory/history', {
      key,
      query: { agent_key: 'ac_not-this-one', memory_key: 'doc' },
    });
    expect(wrong.status).toBe(403);
  });

  it('restores an earlier version as a new one, priced as a store, with If-Match', async () => {
    const key = await server.register();
    await store(key, {
      memory_key: 'cfg',
      memory_value: 'good',
      memory_type: 'fact',
      metadata: { ok: true },
    });
    await store(key, { memory_key: 'cfg', memory_value: 'broken' });
    const stale = await restore(key, { memory_key: 'cfg', version: 1 }, { 'If-Match': '"1"' });
    expect(stale.status).toBe(412);
    const res = await restore(key, { memory_key: 'cfg', version: 1 }, { 'If-Match': '"2"' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      restored_from: 1,
      created: false,
      cost_cents: 1,
      memory: { memory_value: 'good', memory_type: 'fact', metadata: { ok: true }, version: 3 },
    });
    expect(res.headers.get('etag')).toBe('"3"');
    expect((await retrieve(key, 'cfg')).body.memory.memory_value).toBe('good');
    // 2 stores + 1 restore + 1 retrieve; the 412 was free.
    expect(await balance(key)).toBe(50 - 4);
  });

  it('a delete is a version of the history, and a restore undoes it', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'note', memory_value: 'keep me' });
    expect((await remove(key, 'note')).status).toBe(200);
    expect((await retrieve(key, 'note')).status).toBe(404);
    const listed = await history(key, 'note');
    expect(listed.body.current_version).toBeNull();
    expect(listed.body.versions).toEqual([
      { version: 2, stored_at: clock.now().toISOString(), deleted: true },
      expect.objectContaining({ version: 1, memory_value: 'keep me' }),
    ]);
    // A delete has no content to restore: 400, free.
    const marker = await restore(key, { memory_key: 'note', version: 2 });
    expect(marker.status).toBe(400);
    expect(marker.body.field).toBe('version');
    const undone = await restore(key, { memory_key: 'note', version: 1 });
    expect(undone.body).toMatchObject({ created: true, memory: { memory_value: 'keep me', version: 3 } });
    expect((await retrieve(key, 'note')).body.memory.version).toBe(3);
  });

  it("a deleted key's history is kept for the retention, then it is gone; the key's numbers go on", async () => {
    const key = await server.register();
    await store(key, { memory_key: 'old', memory_value: 'v1' });
    await remove(key, 'old');
    clock.advance(59 * 60_000);
    expect((await history(key, 'old')).status).toBe(200);
    clock.advance(60_001);
    const gone = await history(key, 'old');
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('not_found');
    expect((await restore(key, { memory_key: 'old', version: 1 })).status).toBe(404);
    // Version 2 was the delete: a new life of the key never reuses a number an old ETag may hold.
    const anew = await store(key, { memory_key: 'old', memory_value: 'again' });
    expect(anew.body.memory.version).toBe(3);
    expect((await history(key, 'old')).body.versions.map((v: { version: number }) => v.version)).toEqual([3]);
  });

  it('AC_MEMORY_HISTORY going to 0 and back neither reuses a version nor sticks a key', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'ac-history-'));
    const open = (history: string) =>
      startTestServer({
        clock,
        dataDir,
        env: { AC_MEMORY_HISTORY: history, AC_MEMORY_HISTORY_RETENTION: '1h' },
      });
    const withHistory = await open('3');
    const key = await withHistory.register();
    const send = (s: TestServer, fields: Record<string, unknown>) =>
      s.request('POST', '/api/ac/memory', body(key, fields));
    for (const value of ['a', 'b']) await send(withHistory, { memory_key: 'k', memory_value: value });
    await withHistory.stop();

    const without = await open('0');
    expect((await send(without, { memory_key: 'k', memory_value: 'c' })).body.memory.version).toBe(3);
    const del = await without.request('DELETE', '/api/ac/memory', body(key, { memory_key: 'k' }));
    expect(del.status, del.text).toBe(200);
    // The delete took version 4 and left its marker: a new memory under the key goes on at 5, not 1.
    expect((await send(without, { memory_key: 'k', memory_value: 'd' })).body.memory.version).toBe(5);
    const none = await without.request('GET', '/api/ac/memory/history', {
      key,
      query: { agent_key: key, memory_key: 'k' },
    });
    expect(none.body.versions).toEqual([]);
    await without.stop();

    const again = await open('3');
    for (const [value, version] of [
      ['e', 6],
      ['f', 7],
    ] as const) {
      const res = await send(again, { memory_key: 'k', memory_value: value });
      expect(res.status, res.text).toBe(200);
      expect(res.body.memory.version).toBe(version);
    }
    const listed = await again.request('GET', '/api/ac/memory/history', {
      key,
      query: { agent_key: key, memory_key: 'k' },
    });
    expect(listed.body.versions.map((v: { version: number }) => v.version)).toEqual([7, 6]);
    await again.close();
  });

  it('a version not kept, or a key never stored, is 404 and costs nothing', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'k', memory_value: 'v' });
    const missing = await restore(key, { memory_key: 'k', version: 9 });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/Version 9 .* is not in its history/);
    expect((await history(key, 'never')).status).toBe(404);
    expect(await balance(key)).toBe(49);
  });
});
