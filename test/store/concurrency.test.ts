/**
 * Interleaved stores, updates, deletes, retrieves and top-ups of one agent, all at once: the outcome must be
 * that of some serial order — the one the ledger records. On the JSON file store (one transaction at a
 * time) and on PostgreSQL (concurrent transactions that serialise on the agent's row).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { testDatabase } from '../helpers/postgres.js';
import { type ApiResponse, startTestServer, type TestServer } from '../helpers/test-server.js';

const ADMIN = 'operator-token-0123456789';

const STORES: { name: string; env: () => Promise<Record<string, string>> }[] = [
  { name: 'JSON file store', env: async () => ({}) },
  {
    name: 'PostgreSQL',
    env: async () => ({ DATABASE_URL: (await testDatabase({ label: 'concurrency' })).url, DATA_DIR: '' }),
  },
];

for (const backend of STORES)
  describe(`concurrent operations of one agent (${backend.name})`, () => {
    let server: TestServer;
    let key: string;

    beforeAll(async () => {
      server = await startTestServer({
        live: new FakeLiveSource(),
        env: { AC_ADMIN_TOKEN: ADMIN, ...(await backend.env()) },
      });
      key = await server.register('busy@example.com');
    });
    afterAll(() => server.close());

    it('gives the final state of the serial order the ledger records', { timeout: 60_000 }, async () => {
      if (backend.name === 'PostgreSQL') expect(server.running.service.config.database).toBeDefined();
      const body = (extra: Record<string, unknown>) => ({ agent_key: key, ...extra });
      const stores: { memoryKey: string; value: string; res: Promise<ApiResponse> }[] = [];
      const others: Promise<ApiResponse>[] = [];
      for (let i = 0; i < 150; i++) {
        const memoryKey = `k${i % 10}`;
        const value = `value-${i}`;
        stores.push({
          memoryKey,
          value,
          res: server.request('POST', '/api/ac/memory', {
            key,
            body: body({ memory_key: memoryKey, memory_value: value }),
          }),
        });
        if (i % 3 === 0) {
          others.push(
            server.request('GET', '/api/ac/memory', {
              key,
              query: { agent_key: key, memory_key: `k${i % 7}` },
            }),
          );
        }
        if (i % 30 === 0) {
          others.push(
            server.request('POST', '/api/ac/admin/credits', {
              bearer: ADMIN,
              body: { email: 'busy@example.com', cents: 1_000_000 },
            }),
          );
        }
      }
      // Store-then-delete chains on keys of their own, interleaved with all of the above.
      const chains = Array.from({ length: 10 }, async (_, i) => {
        const stored = await server.request('POST', '/api/ac/memory', {
          key,
          body: body({ memory_key: `e${i}`, memory_value: 'x' }),
        });
        const deleted = await server.request('DELETE', '/api/ac/memory', {
          key,
          body: body({ memory_key: `e${i}` }),
        });
        return [stored, deleted];
      });
      const storeResults = await Promise.all(stores.map((s) => s.res));
      const otherResults = await Promise.all(others);
      const chainResults = (await Promise.all(chains)).flat();
      const all = [...storeResults, ...otherResults, ...chainResults];
      for (const r of all) expect([200, 404]).toContain(r.status);

      // The ledger, oldest first, is a serial history: each entry follows from the one before.
      const agent = await server.running.service.core.accounts.authenticate(key);
      const { store } = server.running.service;
      const entries = (await store.read((r) => r.listLedger(agent.id, Number.MAX_SAFE_INTEGER))).reverse();
      const balance = (await server.request('GET', '/api/ac/account', { key })).body
        .credit_balance_cents as number;
      let previous = 0;
      for (const e of entries) {
        expect(e.balanceAfterCents).toBe(previous + e.amountCents);
        previous = e.balanceAfterCents;
      }
      expect(previous).toBe(balance);

      const charged = all
        .filter((r) => r.status === 200)
        .reduce((sum, r) => sum + (r.body.cost_cents ?? 0), 0);
      const topUps = otherResults.filter((r) => r.body?.credited_cents).length * 1_000_000;
      expect(balance).toBe(50 + topUps - charged);

      // For each key, the store whose response carries the balance after the last store entry of that key
      // is the one whose value stands.
      for (let k = 0; k < 10; k++) {
        const memoryKey = `k${k}`;
        const last = entries
          .filter((e) => e.operation === 'memory_store' && e.memoryKey === memoryKey)
          .at(-1);
        const winner = stores.findIndex(
          (s, i) =>
            s.memoryKey === memoryKey &&
            storeResults[i]?.body.credit_balance_cents === last?.balanceAfterCents,
        );
        expect(winner).toBeGreaterThanOrEqual(0);
        const final = await server.request('GET', '/api/ac/memory', {
          key,
          query: { agent_key: key, memory_key: memoryKey },
        });
        expect(final.body.memory.memory_value).toBe(stores[winner]?.value);
      }
      for (let i = 0; i < 10; i++) {
        const gone = await server.request('GET', '/api/ac/memory', {
          key,
          query: { agent_key: key, memory_key: `e${i}` },
        });
        expect(gone.status).toBe(404);
      }
    });
  });
