/**
 * How the PostgreSQL store's one-statement charges (postgres-charges.ts) treat what the database answers, with
 * a runner standing in for the statement channel: a deadlock or a serialization failure is sent again (the
 * statement rolled back whole), at most three times; other errors are not; a database out of reach during a
 * restore's read is "unavailable", nothing done; a restore whose version keeps changing gives up after three
 * reads and hands it to the store's transaction path (its `fallback`).
 */
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { ChargePort, ChargeRequest } from '../../../src/core/charge-port.js';
import { AppError } from '../../../src/core/errors.js';
import { type ChargeRunner, PostgresCharges } from '../../../src/store/postgres/postgres-charges.js';

const request: ChargeRequest = {
  agentId: 'agent-1',
  at: '2026-11-28T00:00:00.000Z',
  cents: 1,
  operation: 'memory_search',
  entryId: 'entry-1',
  ref: {},
  daily: { since: '2026-11-28T00:00:00.000Z' },
};
const rules = { quota: 10_000, keep: 10, retentionSeconds: 86_400 };

const answer = (r: object) => ({ rows: [{ r }] }) as unknown as pg.QueryResult;
const dbError = (code: string) => Object.assign(new Error(`error ${code}`), { code });

/** The transaction path, standing in: each call named in `calls`, answered as not found. */
function fallback(): ChargePort & { calls: string[] } {
  const calls: string[] = [];
  const refuse = (name: string) => async () => {
    calls.push(name);
    return { refused: 'not_found' as const };
  };
  return {
    calls,
    retrieveMemory: refuse('retrieveMemory'),
    storeMemories: refuse('storeMemories'),
    memoryHistory: refuse('memoryHistory'),
    restoreMemory: refuse('restoreMemory'),
    importMemories: refuse('importMemories'),
    charge: refuse('charge'),
  };
}

const noReads = () => Promise.reject(new Error('no reads here'));
const charges = (db: ChargeRunner, transactions = fallback()) =>
  new PostgresCharges(db, transactions, noReads);

/** A runner answering each call from `answers` in turn (an Error is thrown), counting the calls. */
function runner(...answers: (object | Error)[]): ChargeRunner & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async query(text) {
      calls.push(text);
      const next = answers.shift();
      if (next === undefined) throw new Error('no more answers');
      if (next instanceof Error) throw next;
      return next as pg.QueryResult;
    },
  };
}

describe('one-statement charges against what the database answers', () => {
  it('sends a statement again after a deadlock or a serialization failure', async () => {
    const db = runner(dbError('40P01'), dbError('40001'), answer({ balance: 41 }));
    const charged = await charges(db).charge(request, { credit_balance_cents: 0 });
    expect(charged).toEqual({ balanceCents: 41 });
    expect(db.calls).toHaveLength(3);
    expect(new Set(db.calls).size).toBe(1);
  });

  it('gives up after three attempts, with the database error', async () => {
    const db = runner(dbError('40P01'), dbError('40P01'), dbError('40P01'), answer({ balance: 1 }));
    await expect(charges(db).charge(request, { credit_balance_cents: 0 })).rejects.toMatchObject({
      code: '40P01',
    });
    expect(db.calls).toHaveLength(3);
  });

  it('does not send again after another error', async () => {
    const db = runner(dbError('23514'), answer({ balance: 1 }));
    await expect(charges(db).charge(request, { credit_balance_cents: 0 })).rejects.toMatchObject({
      code: '23514',
    });
    expect(db.calls).toHaveLength(1);
  });

  it("answers unavailable, nothing done, when a restore's read cannot reach the database", async () => {
    const db = runner(dbError('ECONNREFUSED'));
    const restored = charges(db).restoreMemory(request, { key: 'k', version: 1 }, rules);
    await expect(restored).rejects.toBeInstanceOf(AppError);
    await expect(restored).rejects.toMatchObject({ code: 'unavailable' });
    await expect(restored).rejects.toThrow(/nothing was done/);
  });

  it('hands a restore to the transaction path after three reads of a version that keeps changing', async () => {
    const entry = { rows: [{ at: new Date(), value: Buffer.from('v'), metadata: {}, deleted: false }] };
    const stale = answer({ refused: 'stale' });
    const db = runner(entry, stale, entry, stale, entry, stale, entry, answer({ balance: 1 }));
    const transactions = fallback();
    const restored = await charges(db, transactions).restoreMemory(request, { key: 'k', version: 1 }, rules);
    expect(restored).toEqual({ refused: 'not_found' });
    expect(db.calls).toHaveLength(6);
    expect(transactions.calls).toEqual(['restoreMemory']);
  });

  it('hands a store whose expiry the core refused to the transaction path, sending nothing', async () => {
    const db = runner();
    const transactions = fallback();
    const refusedExpiry = new AppError('invalid_input', 'expires_at must be in the future.');
    const item = { key: 'k', value: 'v', type: 'fact' as const, metadata: {}, refusedExpiry };
    await charges(db, transactions).storeMemories({ ...request, operation: 'memory_store' }, [item], rules);
    expect(db.calls).toHaveLength(0);
    expect(transactions.calls).toEqual(['storeMemories']);
  });
});
