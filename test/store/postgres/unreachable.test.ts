/**
 * The PostgreSQL store when the database is out of reach: every call fails with the `unavailable` error
 * (503 on REST) that says nothing was done, a release never turns a request's outcome into an error, and
 * once connections work again the same store serves without a restart.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/core/errors.js';
import type { Account } from '../../../src/core/model.js';
import { isUnreachable } from '../../../src/store/postgres/postgres-errors.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { testDatabase } from '../../helpers/postgres.js';
import { closedPort, TcpRelay } from '../../helpers/tcp-relay.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';

const stores: PostgresStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const account: Account = {
  id: 'a',
  email: 'a@example.com',
  name: null,
  plan: 'pay-as-you-go',
  keyHash: 'hash-a',
  balanceCents: 50,
  createdAt: '2026-11-23T00:00:00.000Z',
};

function open(url: string): PostgresStore {
  const store = new PostgresStore({ connectionString: url });
  stores.push(store);
  return store;
}

async function unavailableError(call: Promise<unknown>): Promise<AppError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe('unavailable');
  return err as AppError;
}

describe('PostgreSQL store out of reach', () => {
  it('answers every call with `unavailable`, saying nothing was done', async () => {
    const store = open(`postgresql://postgres@127.0.0.1:${await closedPort()}/nowhere`);
    const writing = await unavailableError(store.transact((tx) => tx.putAccount(account)));
    expect(writing.message).toMatch(/cannot be reached right now; nothing was done/);
    await unavailableError(store.read((r) => r.getAccount('a')));
    await unavailableError(
      store.claimIdempotency({
        agentId: 'a',
        key: 'k',
        fingerprint: 'f',
        operation: 'memory_store',
        now: '2026-11-23T00:00:00.000Z',
        storedAfter: '2026-11-22T00:00:00.000Z',
        leaseMs: 60_000,
      }),
    );
    // Ending a claim it cannot reach leaves it to its lease; the request's own outcome stands.
    await expect(store.releaseIdempotency('a', 'k', 'token')).resolves.toBeUndefined();
  });

  it('serves again without a restart once its connections are cut and come back', async () => {
    const { url, name } = await testDatabase({ label: 'unreachable' });
    const store = open(url);
    await store.transact((tx) => tx.putAccount(account));
    // Every connection of this database is terminated, as a database restart or a failover would.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
    } finally {
      await admin.end();
    }
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await store.transact(async (tx) => {
          const current = (await tx.getAccount('a')) as Account;
          await tx.putAccount({ ...current, balanceCents: current.balanceCents - 1 });
        });
        outcomes.push('ok');
        break;
      } catch (err) {
        expect((err as AppError).code).toBe('unavailable'); // never a 500, never a lost write
        outcomes.push('unavailable');
      }
    }
    expect(outcomes.at(-1)).toBe('ok');
    expect((await store.read((r) => r.getAccount('a')))?.balanceCents).toBe(49);
  });

  it('reports its health: ok, unreachable while out of reach, closed after close()', async () => {
    const { url } = await testDatabase({ label: 'health' });
    const store = open(url);
    expect(await store.health()).toBe('ok');
    const nowhere = open(`postgresql://postgres@127.0.0.1:${await closedPort()}/nowhere`);
    expect(await nowhere.health()).toBe('unreachable');
    await store.close();
    expect(await store.health()).toBe('closed');
  });

  it('a server answers 503 (readiness store_unreachable, requests unavailable) while the database is cut off, and serves again when it returns, without a restart', async () => {
    const { url } = await testDatabase({ label: 'partition' });
    const direct = new URL(url);
    const relay = await TcpRelay.to({ host: direct.hostname, port: Number(direct.port) });
    const relayed = new URL(url);
    relayed.port = String(relay.port);
    let server: TestServer | undefined;
    try {
      server = await startTestServer({ env: { DATABASE_URL: relayed.toString(), DATA_DIR: '' } });
      const key = await server.register('partition@example.com');
      const store = (value: string) =>
        server?.request('POST', '/api/ac/memory', {
          key,
          body: { agent_key: key, memory_key: 'k', memory_value: value },
        });
      expect((await store('before'))?.status).toBe(200);
      expect((await server.request('GET', '/api/ac/ready')).status).toBe(200);

      await relay.cut();
      const ready = await server.request('GET', '/api/ac/ready');
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toBe('5');
      expect(ready.body).toMatchObject({ ready: false, status: 'store_unreachable' });
      expect(ready.body.error).toMatch(/database cannot be reached/);
      const refused = await store('during');
      expect(refused?.status).toBe(503);
      expect(refused?.body).toMatchObject({ code: 'unavailable' });
      expect(refused?.headers.get('retry-after')).toBe('5');
      expect(refused?.body.error).toMatch(/nothing was done/);

      await relay.heal();
      expect((await server.request('GET', '/api/ac/ready')).status).toBe(200);
      const after = await store('after');
      expect(after?.status).toBe(200);
      // One write before, none during, one after: 50 − 2 cents, and the value is the last acknowledged one.
      expect(after?.body.credit_balance_cents).toBe(48);
      const read = await server.request('GET', '/api/ac/memory', {
        key,
        query: { agent_key: key, memory_key: 'k' },
      });
      expect(read.body.memory.memory_value).toBe('after');
    } finally {
      await server?.close();
      await relay.cut();
    }
  });

  it('tells an unreachable database from a wrong request', () => {
    expect(isUnreachable(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('x'), { code: '57P01' }))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('x'), { code: '08006' }))).toBe(true);
    expect(isUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('x'), { code: '23505' }))).toBe(false);
    expect(isUnreachable(Object.assign(new Error('x'), { code: '22021' }))).toBe(false);
  });
});
