/**
 * The PostgreSQL store when the database is out of reach: every call fails with the `unavailable` error
 * (503 on REST) that says nothing was done, a release never turns a request's outcome into an error, and
 * once connections work again the same store serves without a restart.
 */
import { createServer } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/core/errors.js';
import type { Account } from '../../../src/core/model.js';
import { isUnreachable } from '../../../src/store/postgres/postgres-errors.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { testDatabase } from '../../helpers/postgres.js';

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

/** A loopback port that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

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

  it('tells an unreachable database from a wrong request', () => {
    expect(isUnreachable(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('x'), { code: '57P01' }))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('x'), { code: '08006' }))).toBe(true);
    expect(isUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isUnreachable(Object.assign(new Error('x'), { code: '23505' }))).toBe(false);
    expect(isUnreachable(Object.assign(new Error('x'), { code: '22021' }))).toBe(false);
  });
});
