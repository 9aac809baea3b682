/**
 * A transaction's statements on a pipelining connection (src/store/postgres/tx-pipeline.ts): how many round
 * trips and socket writes a charge takes, counted by a relay between the store and the database and by a spy
 * on the sockets' writes; and that a failure among statements sent without waiting still fails the
 * transaction whole, with its own error, even when the work catches it.
 */
import { Socket } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/core/errors.js';
import type { Account, LedgerEntry, Memory } from '../../../src/core/model.js';
import type { StoreTx } from '../../../src/core/store-port.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { type TestDatabase, testDatabase } from '../../helpers/postgres.js';
import { TcpRelay } from '../../helpers/tcp-relay.js';

const account = (id: string, balanceCents = 50): Account => ({
  id,
  email: `${id}@example.com`,
  name: null,
  plan: 'pay-as-you-go',
  keyHash: `hash-${id}`,
  balanceCents,
  createdAt: '2026-11-26T00:00:00.000Z',
});
const memory = (agentId: string, key: string): Memory => ({
  agentId,
  key,
  value: 'v',
  type: 'context',
  metadata: {},
  createdAt: '2026-11-26T00:00:00.000Z',
  updatedAt: '2026-11-26T00:00:00.000Z',
  version: 1,
});
const debit = (agentId: string, n: number, balanceAfterCents: number): LedgerEntry => ({
  id: `txn_${agentId}_${n}`,
  agentId,
  at: '2026-11-26T00:00:00.000Z',
  operation: 'memory_retrieve',
  amountCents: -1,
  balanceAfterCents,
  costCents: 1,
});

/** Counts, through a relay, the round trips and socket writes of what the store does. */
class Counter {
  /** Chunks the relay passed on: what the store sent in one turn each, so its round trips. */
  sent = 0;
  relay!: TcpRelay;

  /** The round trips (chunks relayed) and socket writes (the store's sockets' `_write`/`_writev`) of `work`. */
  async count(work: () => Promise<unknown>): Promise<{ roundTrips: number; writes: number }> {
    const proto = Socket.prototype as unknown as Record<
      '_write' | '_writev',
      (...args: unknown[]) => unknown
    >;
    const originals = { _write: proto._write, _writev: proto._writev };
    let writes = 0;
    const port = this.relay.port;
    for (const name of ['_write', '_writev'] as const) {
      const original = originals[name];
      proto[name] = function (this: Socket, ...args: unknown[]) {
        if (this.remotePort === port) writes++;
        return original.apply(this, args);
      };
    }
    const before = this.sent;
    try {
      await work();
    } finally {
      Object.assign(proto, originals);
    }
    return { roundTrips: this.sent - before, writes };
  }
}

let database: TestDatabase;
const counter = new Counter();
let store: PostgresStore;
beforeAll(async () => {
  database = await testDatabase({ label: 'tx_pipeline' });
  counter.relay = await TcpRelay.to(database.address, {
    onClientData: () => {
      counter.sent++;
    },
  });
  const url = new URL(database.url);
  url.port = String(counter.relay.port);
  // One connection, so that every transaction below runs on the same (already opened) one.
  store = new PostgresStore({ connectionString: url.toString(), poolMax: 1 });
  await store.transact(async (tx) => {
    await tx.putAccount(account('a'));
    await tx.putMemory(memory('a', 'k'));
  });
});
afterAll(async () => {
  await store.close();
  await counter.relay.cut();
});

/** The account's balance, its ledger's sum and length, read on a connection of their own. */
async function money(id: string): Promise<{ balance: number; entries: number; sum: number }> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query(
      'SELECT a.balance_cents AS balance, count(l.seq) AS entries, coalesce(sum(l.amount_cents), 0) AS sum ' +
        'FROM accounts a LEFT JOIN ledger l ON l.agent_id = a.id WHERE a.id = $1 GROUP BY a.balance_cents',
      [id],
    );
    return { balance: Number(rows[0].balance), entries: Number(rows[0].entries), sum: Number(rows[0].sum) };
  } finally {
    await client.end();
  }
}

/** A charged read, as the core runs it: the account locked, the memory read, one debit. */
async function chargedRead(id: string): Promise<Memory | undefined> {
  return store.transact(async (tx) => {
    const held = await tx.getAccount(id);
    if (!held) throw new Error('no account');
    const found = await tx.getMemory(id, 'k');
    const after = held.balanceCents - 1;
    const { entries } = await money(id);
    await tx.appendLedger(debit(id, entries + 1, after));
    await tx.putAccount({ ...held, balanceCents: after });
    return found;
  });
}

/**
 * Sends agent a's next debit, then a balance of -5 cents, which the CHECK refuses when the statement runs,
 * after the debit was sent; neither answer is awaited.
 */
async function debitThenRefuse(tx: StoreTx, entries: number): Promise<void> {
  const held = (await tx.getAccount('a')) as Account;
  await tx.appendLedger(debit('a', entries + 1, held.balanceCents - 1));
  await tx.putAccount({ ...held, balanceCents: -5 });
}

describe('a transaction on a pipelining connection', () => {
  afterEach(async () => {
    // Whatever a test did, the one connection is left usable.
    expect(await store.read((r) => r.getAccount('a'))).toBeDefined();
  });

  it('sends a charged read in three round trips of one write each: BEGIN with the lock, the read, the debit with COMMIT', async () => {
    // Warm: the statements are prepared on the connection once, and later sent by name.
    await chargedRead('a');
    const before = await money('a');
    // money() inside the work reads on a connection of its own, which the relay does not see.
    expect(await counter.count(() => chargedRead('a'))).toEqual({ roundTrips: 3, writes: 3 });
    const after = await money('a');
    expect(after.balance).toBe(before.balance - 1);
    expect(after.entries).toBe(before.entries + 1);
    expect(after.balance).toBe(50 + after.sum);
  });

  it('sends nothing for a transaction that runs no statement', async () => {
    expect(await counter.count(() => store.transact(async () => 'nothing'))).toEqual({
      roundTrips: 0,
      writes: 0,
    });
  });

  it('a write that fails while nobody waits fails the transaction with its own error, and nothing of it stays', async () => {
    const before = await money('a');
    const failing = store.transact(async (tx) => {
      await debitThenRefuse(tx, before.entries);
      await tx.putMemory(memory('a', 'after-the-failure'));
    });
    await expect(failing).rejects.toMatchObject({ code: '23514' });
    expect(await money('a')).toEqual(before);
    expect(await store.read((r) => r.getMemory('a', 'after-the-failure'))).toBeUndefined();
  });

  it('a failed write is reported at the next read, before the work goes on', async () => {
    let readAfter = false;
    const failing = store.transact(async (tx) => {
      await tx.putAccount({ ...account('a'), balanceCents: -1 });
      await tx.getMemory('a', 'k');
      readAfter = true;
    });
    await expect(failing).rejects.toMatchObject({ code: '23514' });
    expect(readAfter).toBe(false);
  });

  it('a failure the work catches and goes past still fails the commit, and nothing of it stays', async () => {
    const before = await money('a');
    const failing = store.transact(async (tx) => {
      await debitThenRefuse(tx, before.entries);
      // The refused write is reported here; this work shrugs it off and returns as if all went well.
      await tx.getMemory('a', 'k').catch(() => undefined);
      return 'done';
    });
    await expect(failing).rejects.toMatchObject({ code: '23514' });
    expect(await money('a')).toEqual(before);
  });

  it('a connection the server ends while a write waits: 503, saying nothing was done', async () => {
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query("SELECT 1 FROM accounts WHERE id = 'a' FOR UPDATE");
      const before = await money('a');
      const ending = store
        .transact(async (tx) => {
          await tx.getMemory('a', 'k');
          await tx.putAccount({ ...account('a'), balanceCents: 7 }); // sent with COMMIT; waits for the lock
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      let waiting: number | undefined;
      for (let i = 0; i < 200 && waiting === undefined; i++) {
        const { rows } = await other.query(
          "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        waiting = rows[0]?.pid;
        if (waiting === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(waiting).toBeDefined();
      await other.query('SELECT pg_terminate_backend($1)', [waiting]);
      const err = await ending;
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('unavailable');
      expect((err as AppError).message).toMatch(/nothing was done/);
      await other.query('ROLLBACK');
      expect(await money('a')).toEqual(before);
    } finally {
      await other.end();
    }
  });

  it('a debit for an account that is not there fails in the database, not silently', async () => {
    const failing = store.transact((tx) => tx.appendLedger(debit('nobody', 1, 10)));
    await expect(failing).rejects.toMatchObject({ code: '23502' });
  });

  it('an error of the work after writes were sent rolls them back', async () => {
    const before = await money('a');
    const failing = store.transact(async (tx) => {
      const held = (await tx.getAccount('a')) as Account;
      await tx.appendLedger(debit('a', before.entries + 1, held.balanceCents - 1));
      await tx.putMemory(memory('a', 'thrown-away'));
      throw new Error('the work changed its mind');
    });
    await expect(failing).rejects.toThrow('the work changed its mind');
    expect(await money('a')).toEqual(before);
    expect(await store.read((r) => r.getMemory('a', 'thrown-away'))).toBeUndefined();
  });

  it('finishing a claim whose lease another request took charges nothing', async () => {
    const claim = (now: string) =>
      store.claimIdempotency({
        agentId: 'a',
        key: 'slow',
        fingerprint: 'fp',
        operation: 'memory_retrieve',
        now,
        storedAfter: '2026-11-25T00:00:00.000Z',
        leaseMs: 1_000,
      });
    const first = await claim('2026-11-26T00:00:00.000Z');
    expect(first.state).toBe('claimed');
    // Two seconds later the lease has run out, and a retry takes the key.
    expect((await claim('2026-11-26T00:00:02.000Z')).state).toBe('claimed');
    const before = await money('a');
    const finishing = store.transact(async (tx) => {
      const held = (await tx.getAccount('a')) as Account;
      await tx.appendLedger(debit('a', before.entries + 1, held.balanceCents - 1));
      await tx.putAccount({ ...held, balanceCents: held.balanceCents - 1 });
      await tx.putIdempotency(
        {
          agentId: 'a',
          key: 'slow',
          fingerprint: 'fp',
          operation: 'memory_retrieve',
          status: 200,
          body: {},
          createdAt: '2026-11-26T00:00:00.500Z',
        },
        (first as { token: string }).token,
      );
    });
    const err = await finishing.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('idempotency_in_progress');
    expect(await money('a')).toEqual(before);
  });
});
