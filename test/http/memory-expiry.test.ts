/**
 * Memories that expire (issue 15), on REST, on both stores (AC_TEST_STORE=postgres runs this file on
 * PostgreSQL), with the service's clock injected: ttl_seconds, expires_at and per-type defaults
 * (AC_MEMORY_TTL); an expired memory is absent everywhere (retrieve 404 free, not listed, not counted
 * against the quota, a store creates it anew); refresh_on_read extends it without changing its version or
 * its place in the list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

const clock = new ManualClock();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    clock,
    env: { AC_MEMORY_TTL: 'context=1h,workflow=30m', AC_MEMORIES_PER_AGENT: '2' },
  });
});
afterAll(async () => {
  await server.close();
});

const inSeconds = (s: number) => new Date(clock.now().getTime() + s * 1000).toISOString();
function store(key: string, body: Record<string, unknown>) {
  return server.request('POST', '/api/ac/memory', {
    key,
    body: { agent_key: key, memory_type: 'fact', ...body },
  });
}
function retrieve(key: string, memoryKey: string, extra: Record<string, string> = {}) {
  return server.request('GET', '/api/ac/memory', {
    key,
    query: { agent_key: key, memory_key: memoryKey, ...extra },
  });
}
async function listed(key: string): Promise<string[]> {
  const res = await server.request('POST', '/api/ac/memory/search', { key, body: { agent_key: key } });
  return res.body.memories.map((m: { memory_key: string }) => m.memory_key);
}
async function balance(key: string): Promise<number> {
  return (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents;
}

describe('memory expiry', () => {
  it('ttl_seconds: live until then, then absent everywhere, and free to ask about', async () => {
    const key = await server.register();
    const stored = await store(key, { memory_key: 'soon', memory_value: 'v', ttl_seconds: 60 });
    expect(stored.body.memory.expires_at).toBe(inSeconds(60));
    clock.advance(59_000);
    expect((await retrieve(key, 'soon')).status).toBe(200);
    expect(await listed(key)).toEqual(['soon']);
    clock.advance(1_000);
    const gone = await retrieve(key, 'soon');
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('not_found');
    expect(await listed(key)).toEqual([]);
    const del = await server.request('DELETE', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: 'soon' },
    });
    expect(del.status).toBe(404);
    // store 1, retrieve 1, list 1, list 1: the 404s cost nothing.
    expect(await balance(key)).toBe(50 - 4);
  });

  it('an expired memory does not count against the quota, and a store over it creates it anew', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'a', memory_value: '1', ttl_seconds: 10 });
    const createdAt = clock.now().toISOString();
    await store(key, { memory_key: 'b', memory_value: '2' });
    // The quota (2 here) is full while both are live.
    expect((await store(key, { memory_key: 'c', memory_value: '3' })).body.code).toBe('quota_exceeded');
    clock.advance(10_000);
    expect((await store(key, { memory_key: 'c', memory_value: '3' })).status).toBe(200);
    clock.advance(1_000);
    // 'a' expired: storing it is a new memory (created now), its version going on from its history (1).
    // The quota is full again (b and c).
    const again = await store(key, { memory_key: 'a', memory_value: 'new' });
    expect(again.body.code).toBe('quota_exceeded');
    await server.request('DELETE', '/api/ac/memory', { key, body: { agent_key: key, memory_key: 'c' } });
    const recreated = await store(key, { memory_key: 'a', memory_value: 'new' });
    expect(recreated.body).toMatchObject({ created: true, memory: { version: 2, expires_at: null } });
    expect(recreated.body.memory.created_at).not.toBe(createdAt);
  });

  it('expires_at sets the instant; in the past, with ttl_seconds too, or not a date is a free 400', async () => {
    const key = await server.register();
    const at = inSeconds(3600);
    const ok = await store(key, { memory_key: 'x', memory_value: 'v', expires_at: at });
    expect(ok.body.memory.expires_at).toBe(at);
    for (const [body, field] of [
      [{ expires_at: inSeconds(-1) }, 'expires_at'],
      [{ expires_at: clock.now().toISOString() }, 'expires_at'],
      [{ expires_at: 'tomorrow' }, 'expires_at'],
      [{ expires_at: inSeconds(11 * 365 * 86_400) }, 'expires_at'],
      [{ expires_at: at, ttl_seconds: 5 }, 'expires_at'],
      [{ ttl_seconds: -1 }, 'ttl_seconds'],
      [{ ttl_seconds: 1.5 }, 'ttl_seconds'],
    ] as const) {
      const res = await store(key, { memory_key: 'y', memory_value: 'v', ...body });
      expect(res.status, res.text).toBe(400);
      expect(res.body.field, res.text).toBe(field);
    }
    expect(await balance(key)).toBe(49);
  });

  it('per-type defaults (AC_MEMORY_TTL) apply when the store sets no expiry; ttl_seconds 0 means never', async () => {
    const key = await server.register();
    const context = await store(key, { memory_key: 'c', memory_value: 'v', memory_type: 'context' });
    expect(context.body.memory.expires_at).toBe(inSeconds(3600));
    const workflow = await store(key, { memory_key: 'w', memory_value: 'v', memory_type: 'workflow' });
    expect(workflow.body.memory.expires_at).toBe(inSeconds(1800));
    const kept = await store(key, {
      memory_key: 'c',
      memory_value: 'v',
      memory_type: 'context',
      ttl_seconds: 0,
    });
    expect(kept.body.memory.expires_at).toBeNull();
    // A store sets the expiry afresh: without ttl_seconds, the type default again.
    const fact = await store(key, { memory_key: 'w', memory_value: 'v2', memory_type: 'fact' });
    expect(fact.body.memory.expires_at).toBeNull();
  });

  it('refresh_on_read lives the time to live again from now, keeping the version and the list order', async () => {
    const key = await server.register();
    await store(key, { memory_key: 'session', memory_value: 'v', ttl_seconds: 100 });
    clock.advance(1_000);
    await store(key, { memory_key: 'later', memory_value: 'v' });
    clock.advance(59_000);
    const plain = await retrieve(key, 'session');
    expect(plain.body.memory.expires_at).toBe(inSeconds(40));
    const refreshed = await retrieve(key, 'session', { refresh_on_read: 'true' });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body.memory).toMatchObject({ version: 1, expires_at: inSeconds(100) });
    expect(await listed(key)).toEqual(['later', 'session']);
    clock.advance(99_000);
    expect((await retrieve(key, 'session')).body.memory.expires_at).toBe(inSeconds(1));
    clock.advance(1_000);
    expect((await retrieve(key, 'session', { refresh_on_read: 'true' })).status).toBe(404);
    // refresh_on_read on a memory without expiry changes nothing; a bad value is 400.
    expect((await retrieve(key, 'later', { refresh_on_read: 'true' })).body.memory.expires_at).toBeNull();
    const bad = await retrieve(key, 'later', { refresh_on_read: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('refresh_on_read');
  });
});
