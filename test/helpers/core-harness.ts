/**
 * The core driven directly, as the faces drive it (authenticate, `parseInput`, `runOperation` over the
 * operation table), over the in-memory store with a manual clock and a scripted live source: no HTTP, no files.
 */
import { expect } from 'vitest';
import { createNodeLiveCache } from '../../src/cache/node-live-cache.js';
import { createCore } from '../../src/core/core.js';
import { AppError } from '../../src/core/errors.js';
import type { Limits } from '../../src/core/limits.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { createOperations } from '../../src/core/operation-table.js';
import { runOperation } from '../../src/core/run-operation.js';
import { fieldsOf, parseInput } from '../../src/core/validation.js';
import { createMemoryStore } from '../../src/store/json/json-store.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ManualClock } from './manual-clock.js';

export type CoreHarness = ReturnType<typeof coreHarness>;

export function coreHarness(limits: Partial<Limits> = {}, start = '2026-11-21T12:00:00.000Z') {
  const store = createMemoryStore();
  const clock = new ManualClock(Date.parse(start));
  const live = new FakeLiveSource();
  const core = createCore({
    store,
    cache: createNodeLiveCache(DEFAULT_LIMITS.cacheMinutesMax),
    live,
    clock,
    limits: { ...DEFAULT_LIMITS, ...limits },
  });
  const operations = createOperations(core.schemas);

  async function call(
    op: string,
    input: Record<string, unknown> = {},
    key?: string,
    idempotencyKey?: string,
  ) {
    const operation = operations.find((o) => o.name === op);
    if (!operation) throw new Error(`no operation ${op}`);
    const agentId = operation.auth === 'agent' ? (await core.accounts.authenticate(key)).id : undefined;
    const parsed = parseInput(operation.input, input, fieldsOf(operation.input));
    return runOperation(core, operation, agentId, parsed, idempotencyKey);
  }
  async function body(op: string, input: Record<string, unknown> = {}, key?: string): Promise<any> {
    return (await call(op, input, key)).body;
  }
  async function failure(promise: Promise<unknown>): Promise<AppError> {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
    return err;
  }
  async function register(email = 'a@example.test'): Promise<{ key: string; id: string }> {
    const key = (await body('register', { email })).agent_key as string;
    return { key, id: (await core.accounts.authenticate(key)).id };
  }
  async function ledger(id: string) {
    return store.read(async (r) => ({
      account: await r.getAccount(id),
      entries: await r.listLedger(id, 10_000),
    }));
  }
  /** The ledger's invariant: the balance is the sum of the amounts, never negative. */
  async function expectBalanced(id: string) {
    const { account, entries } = await ledger(id);
    expect(account?.balanceCents).toBe(entries.reduce((sum, e) => sum + e.amountCents, 0));
    expect(account?.balanceCents).toBeGreaterThanOrEqual(0);
  }
  return { store, clock, live, core, call, body, failure, register, ledger, expectBalanced };
}
