/** POST /api/ac/account/rotate-key: a new key at once, the old one dead at once, nothing else changed. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';

describe('key rotation', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
  });
  afterAll(() => server.close());

  it('returns a new key, invalidates the old one at once, and keeps balance, ledger and memories', async () => {
    const oldKey = await server.register();
    await server.request('POST', '/api/ac/memory', {
      key: oldKey,
      body: { agent_key: oldKey, memory_key: 'kept', memory_value: 'still here' },
    });
    const rotated = await server.request('POST', '/api/ac/account/rotate-key', {
      key: oldKey,
      body: { agent_key: oldKey },
    });
    expect(rotated.status).toBe(200);
    const newKey = rotated.body.agent_key as string;
    expect(newKey).toMatch(/^ac_[A-Za-z0-9_-]{43}$/);
    expect(newKey).not.toBe(oldKey);
    expect(rotated.body).toMatchObject({ credit_balance_cents: 49, plan: expect.any(String) });

    const withOld = await server.request('GET', '/api/ac/account', { key: oldKey });
    expect(withOld.status).toBe(401);
    expect(withOld.body.code).toBe('unauthorized');
    const memory = await server.request('GET', '/api/ac/memory', {
      bearer: newKey,
      query: { agent_key: newKey, memory_key: 'kept' },
    });
    expect(memory.body.memory.memory_value).toBe('still here');
    expect(await ledgerSum(server, newKey)).toBe(48);
    // The old key cannot rotate again either.
    expect((await server.request('POST', '/api/ac/account/rotate-key', { key: oldKey })).status).toBe(401);
  });

  it('refuses an agent_key that differs from the header key, and unknown fields', async () => {
    const key = await server.register();
    const other = await server.register();
    const mismatch = await server.request('POST', '/api/ac/account/rotate-key', {
      key,
      body: { agent_key: other },
    });
    expect(mismatch.status).toBe(403);
    const unknown = await server.request('POST', '/api/ac/account/rotate-key', {
      key,
      body: { new_key: 'mine' },
    });
    expect(unknown.status).toBe(400);
    expect((await server.request('GET', '/api/ac/account', { key })).status).toBe(200);
  });

  it('stays rotated after a restart', async () => {
    const first = await startTestServer({ live: new FakeLiveSource() });
    const oldKey = await first.register();
    const rotated = await first.request('POST', '/api/ac/account/rotate-key', { key: oldKey });
    await first.stop();
    const second = await startTestServer({ live: new FakeLiveSource(), dataDir: first.dataDir });
    try {
      expect((await second.request('GET', '/api/ac/account', { key: oldKey })).status).toBe(401);
      expect((await second.request('GET', '/api/ac/account', { key: rotated.body.agent_key })).status).toBe(
        200,
      );
    } finally {
      await second.close();
    }
  });
});
