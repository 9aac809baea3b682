/**
 * Idempotency-Key on REST: a retry with the same key and request returns the stored response and is not
 * charged; another request under the same key is 422; a retry while the first runs is 409; only
 * successes are stored; records survive a restart and are kept at least 24 hours, per agent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveResult } from '../../src/core/live-port.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import {
  type ApiResponse,
  ledgerSum,
  ManualClock,
  type RequestOptions,
  startTestServer,
  type TestServer,
} from '../helpers/test-server.js';

describe('Idempotency-Key', () => {
  let server: TestServer;
  const live = new FakeLiveSource();
  const clock = new ManualClock();

  beforeAll(async () => {
    server = await startTestServer({ live, clock });
  });
  afterAll(() => server.close());

  const balance = async (key: string) =>
    (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;
  const post = (key: string, path: string, body: object, idem?: string, extra: RequestOptions = {}) =>
    server.request('POST', path, {
      key,
      body: { agent_key: key, ...body },
      ...(idem === undefined ? {} : { headers: { 'Idempotency-Key': idem } }),
      ...extra,
    });
  const operations = async (key: string) =>
    (
      await server.request('GET', '/api/ac/account/transactions', { key, query: { limit: '100' } })
    ).body.transactions.map((t: { operation: string }) => t.operation);

  it('a retried store returns the first response, with Idempotent-Replayed, and charges once', async () => {
    const key = await server.register();
    const first = await post(key, '/api/ac/memory', { memory_key: 'a', memory_value: 'one' }, 'req-1');
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    clock.advance(60_000);
    const again = await post(key, '/api/ac/memory', { memory_key: 'a', memory_value: 'one' }, 'req-1');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body); // same balance, same timestamps: the stored response
    expect(await balance(key)).toBe(49);
    expect(await ledgerSum(server, key)).toBe(49);
    expect(await operations(key)).toEqual(['memory_store', 'starter_credit']);
    // The debit names the request's key, for audits (one debit per key at most).
    const agentId = (await server.running.service.core.accounts.authenticate(key)).id;
    const entries = await server.running.service.store.read((r) => r.listLedger(agentId, 10));
    expect(entries.map((e) => [e.operation, e.idempotencyKey])).toEqual([
      ['memory_store', 'req-1'],
      ['starter_credit', undefined],
    ]);
  });

  it('the key ignores field order and defaults: the same request written differently replays', async () => {
    const key = await server.register();
    const first = await post(
      key,
      '/api/ac/memory',
      { memory_key: 'b', memory_value: 'v', metadata: { x: 1, y: [1, 2] } },
      'order',
    );
    const again = await post(
      key,
      '/api/ac/memory',
      { metadata: { y: [1, 2], x: 1 }, memory_type: 'context', memory_value: 'v', memory_key: 'b' },
      'order',
    );
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await balance(key)).toBe(49);
  });

  it('the same key with another request is 422 and changes nothing', async () => {
    const key = await server.register();
    await post(key, '/api/ac/memory', { memory_key: 'c', memory_value: 'one' }, 'k');
    const otherValue = await post(key, '/api/ac/memory', { memory_key: 'c', memory_value: 'two' }, 'k');
    expect(otherValue.status).toBe(422);
    expect(otherValue.body).toMatchObject({ code: 'idempotency_key_reused', field: 'idempotency_key' });
    expect(otherValue.body.error).toMatch(/new key/);
    const otherOperation = await post(key, '/api/ac/memory/search', {}, 'k');
    expect(otherOperation.status).toBe(422);
    expect(otherOperation.body.error).toMatch(/memory_store/);
    const memory = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'c' },
    });
    expect(memory.body.memory.memory_value).toBe('one');
    expect(await balance(key)).toBe(48); // one store, one retrieve
  });

  it('keys are per agent: another agent may use the same key for its own request', async () => {
    const a = await server.register();
    const b = await server.register();
    await post(a, '/api/ac/memory', { memory_key: 'd', memory_value: 'a' }, 'shared');
    const res = await post(b, '/api/ac/memory', { memory_key: 'd', memory_value: 'b' }, 'shared');
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(await balance(b)).toBe(49);
  });

  it('a retry while the first is still running is 409; after it finishes, the retry replays', async () => {
    const key = await server.register();
    let release: (value: LiveResult) => void = () => undefined;
    live.next = () =>
      new Promise<LiveResult>((resolve) => {
        release = resolve;
      });
    const body = { query_type: 'weather', query: 'slow town', cache_minutes: 0 };
    const first = post(key, '/api/ac/data', body, 'slow');
    await waitFor(() => live.calls.some((c) => c.query === 'slow town'));
    const during = await post(key, '/api/ac/data', body, 'slow');
    expect(during.status).toBe(409);
    expect(during.body).toMatchObject({ code: 'idempotency_in_progress' });
    const differentDuring = await post(key, '/api/ac/data', { ...body, query: 'elsewhere' }, 'slow');
    expect(differentDuring.status).toBe(422);
    release({ data: { temp: 3 }, source: 'fake' });
    const done = await first;
    live.next = undefined;
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ from_cache: false, cost_cents: 2 });
    const after = await post(key, '/api/ac/data', body, 'slow');
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(after.body).toEqual(done.body);
    expect(await balance(key)).toBe(48);
    expect(live.calls.filter((c) => c.query === 'slow town')).toHaveLength(1);
  });

  it('ten parallel copies of one request: one runs, none is charged twice', async () => {
    const key = await server.register();
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        post(key, '/api/ac/memory', { memory_key: 'burst', memory_value: 'v' }, 'burst'),
      ),
    );
    const ran = results.filter((r) => r.status === 200 && !r.headers.get('idempotent-replayed'));
    expect(ran).toHaveLength(1);
    for (const r of results) {
      expect([200, 409]).toContain(r.status);
      if (r.status === 200) expect(r.body).toEqual(ran[0]?.body);
    }
    expect(await balance(key)).toBe(49);
    expect(await ledgerSum(server, key)).toBe(49);
  });

  it('a failed request stores nothing: the retry with the same key runs and is charged once', async () => {
    const key = await server.register();
    live.failWith('upstream_failed');
    const body = { query_type: 'news', query: 'flaky', cache_minutes: 0 };
    const failed = await post(key, '/api/ac/data', body, 'flaky');
    expect(failed.status).toBe(502);
    live.next = undefined;
    const retried = await post(key, '/api/ac/data', body, 'flaky');
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(await balance(key)).toBe(48);
  });

  it('a 402 is not stored either: after a top-up the same key succeeds', async () => {
    const key = await server.register();
    for (let i = 0; i < 50; i++)
      await post(key, '/api/ac/memory', { memory_key: `f${i}`, memory_value: 'v' });
    const poor = await post(key, '/api/ac/memory', { memory_key: 'late', memory_value: 'v' }, 'late');
    expect(poor.status).toBe(402);
    const { core } = server.running.service;
    const email = (await server.request('GET', '/api/ac/account', { key })).body.email;
    await core.accounts.addCredits({ email, cents: 5 });
    const paid = await post(key, '/api/ac/memory', { memory_key: 'late', memory_value: 'v' }, 'late');
    expect(paid.status).toBe(200);
    expect(paid.body.credit_balance_cents).toBe(4);
  });

  it('a free answer (cached data) is stored too and replays with its own body', async () => {
    const key = await server.register();
    await post(key, '/api/ac/data', { query_type: 'price', query: 'cached coin' });
    const cached = await post(key, '/api/ac/data', { query_type: 'price', query: 'cached coin' }, 'cc');
    expect(cached.body).toMatchObject({ from_cache: true, cost_cents: 0 });
    clock.advance(5_000);
    const replay = await post(key, '/api/ac/data', { query_type: 'price', query: 'cached coin' }, 'cc');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(cached.body);
  });

  it('delete and retrieve honour the key too; account routes ignore it', async () => {
    const key = await server.register();
    await post(key, '/api/ac/memory', { memory_key: 'gone', memory_value: 'v' });
    const del = () =>
      server.request('DELETE', '/api/ac/memory', {
        key,
        body: { agent_key: key, memory_key: 'gone' },
        headers: { 'Idempotency-Key': 'del-1' },
      });
    expect((await del()).status).toBe(200);
    const again = await del();
    expect(again.status).toBe(200); // not 404: the stored answer
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const account = await server.request('GET', '/api/ac/account', {
      key,
      headers: { 'Idempotency-Key': 'x'.repeat(300) },
    });
    expect(account.status).toBe(200);
  });

  it('rejects a malformed key with 400 before doing anything', async () => {
    const key = await server.register();
    const bad = ['x'.repeat(256), 'caf\u00e9', ' ', 'tab\tkey'];
    for (const idem of bad) {
      const res = await post(key, '/api/ac/memory', { memory_key: 'm', memory_value: 'v' }, idem).catch(
        (err: Error) => ({ status: -1, body: { error: err.message } }) as unknown as ApiResponse,
      );
      if (res.status === -1) continue; // fetch itself refuses some header values; the server never sees them
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_input', field: 'idempotency_key' });
      expect(res.body.error).toMatch(/1-255 printable ASCII/);
    }
    expect(await balance(key)).toBe(50);
  });

  it('records are kept 24 hours: a retry a day later is a new request', async () => {
    const key = await server.register();
    const body = { memory_key: 'day', memory_value: 'v' };
    await post(key, '/api/ac/memory', body, 'daily');
    clock.advance(24 * 3600_000 - 1000);
    expect((await post(key, '/api/ac/memory', body, 'daily')).headers.get('idempotent-replayed')).toBe(
      'true',
    );
    clock.advance(2000);
    const later = await post(key, '/api/ac/memory', body, 'daily');
    expect(later.headers.get('idempotent-replayed')).toBeNull();
    expect(await balance(key)).toBe(48);
  });
});

describe('Idempotency-Key across a restart', () => {
  it('a retry after the server restarted replays the stored response', async () => {
    const first = await startTestServer({ live: new FakeLiveSource() });
    const key = await first.register();
    const body = { agent_key: key, memory_key: 'r', memory_value: 'v' };
    const headers = { 'Idempotency-Key': 'restart-1' };
    const original = await first.request('POST', '/api/ac/memory', { key, body, headers });
    await first.stop(); // a clean stop folds the journal into the snapshot
    const second = await startTestServer({ live: new FakeLiveSource(), dataDir: first.dataDir });
    try {
      const replay = await second.request('POST', '/api/ac/memory', { key, body, headers });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(original.body);
      expect(await ledgerSum(second, key)).toBe(49);
    } finally {
      await second.close();
    }
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!condition()) throw new Error('condition not met');
}
