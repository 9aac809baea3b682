/**
 * The operation table is the only source of price and charge: every entry with a price is charged exactly
 * that price under its own name, its response reports that price as cost_cents, and the ledger's operation
 * names are the table's charged entries plus the credit kinds. Each charged operation is driven once through
 * `runOperation` (the path every face takes) on a fresh in-process service, and the ledger is read back.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { CHARGED_OPERATIONS, CREDIT_KINDS, type LedgerEntry } from '../../src/core/model.js';
import type { Operation } from '../../src/core/operation-table.js';
import { runOperation } from '../../src/core/run-operation.js';
import { parseInput } from '../../src/core/validation.js';
import { openService, type Service } from '../../src/service.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';

/** A valid request for each charged operation, in an order in which each succeeds. */
const SAMPLE_INPUTS: Record<(typeof CHARGED_OPERATIONS)[number], Record<string, unknown>> = {
  memory_store: { memory_key: 'note', memory_value: 'remember this' },
  memory_store_batch: { memories: [{ memory_key: 'note', memory_value: 'v' }] },
  memory_retrieve: { memory_key: 'note' },
  memory_search: {},
  memory_history: { memory_key: 'note' },
  data: { query_type: 'news', query: 'Prices  Today' },
  memory_delete: { memory_key: 'note' },
  memory_restore: { memory_key: 'note', version: 1 },
  memory_import: { ndjson: '{"memory_key": "imported", "memory_value": "v"}\n' },
};

const priced = (op: Operation) => op.cost.cents > 0 || (op.cost.cachedCents ?? 0) > 0;

describe('the operation table is the only source of price and charge', () => {
  let dataDir: string;
  let service: Service;
  let agentId: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'ac-prices-'));
    const config = loadConfig({ DATA_DIR: dataDir, AC_LOG_LEVEL: 'silent', AC_RATE_LIMIT: 'off' });
    service = await openService(config, { command: 'test', live: new FakeLiveSource() });
    await service.core.accounts.register({ email: 'prices@example.com' });
    const account = await service.store.read((reader) => reader.findAccountByEmail('prices@example.com'));
    agentId = account?.id ?? '';
  });
  afterEach(async () => {
    await service.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const ledger = () => service.store.read((reader) => reader.listLedger(agentId, 1000));
  const entry = (name: string) => {
    const found = service.operations.find((op) => op.name === name);
    if (!found) throw new Error(`no entry ${name}`);
    return found;
  };
  const run = async (op: Operation, input: Record<string, unknown>, idempotencyKey?: string) =>
    (await runOperation(service.core, op, agentId, parseInput(op.input, input), idempotencyKey)).body;

  it('the charged entries are exactly CHARGED_OPERATIONS, and every priced entry is one of them', () => {
    const charged = service.operations.filter((op) =>
      (CHARGED_OPERATIONS as readonly string[]).includes(op.name),
    );
    expect(charged.map((op) => op.name).sort()).toEqual([...CHARGED_OPERATIONS].sort());
    // The spec's charged operations need agent_key in the request; the service's own accept it.
    const spec = ['memory_store', 'memory_retrieve', 'memory_delete', 'memory_search', 'data'];
    for (const op of charged) {
      const agentKeyField = spec.includes(op.name) ? 'required' : 'optional';
      expect(op, op.name).toMatchObject({ auth: 'agent', agentKeyField, idempotent: true });
    }
    for (const op of service.operations.filter(priced))
      expect(CHARGED_OPERATIONS as readonly string[], `${op.name} has a price`).toContain(op.name);
  });

  it.each([
    ['without an idempotency key', undefined],
    ['with an idempotency key', 'k'],
  ])(
    'each charged operation debits its declared price under its own name and reports it (%s)',
    async (_label, key) => {
      for (const name of Object.keys(SAMPLE_INPUTS) as (keyof typeof SAMPLE_INPUTS)[]) {
        const op = entry(name);
        const before = await ledger();
        const body = await run(op, SAMPLE_INPUTS[name], key === undefined ? undefined : `${key}-${name}`);
        const after = await ledger();
        const added = after.slice(0, after.length - before.length);
        const balanceBefore = before[0]?.balanceAfterCents ?? 0;

        expect(body.cost_cents, `${name}: cost_cents`).toBe(op.cost.cents);
        if (op.cost.cents === 0) {
          expect(added, `${name}: a price of 0 writes no entry`).toEqual([]);
          expect(body.credit_balance_cents).toBe(balanceBefore);
          continue;
        }
        expect(added, `${name}: one entry`).toHaveLength(1);
        const [charge] = added as [LedgerEntry];
        expect(charge).toMatchObject({
          operation: op.name,
          amountCents: -op.cost.cents,
          costCents: op.cost.cents,
          balanceAfterCents: balanceBefore - op.cost.cents,
        });
        expect(body.credit_balance_cents).toBe(charge.balanceAfterCents);
      }
      const operations = new Set((await ledger()).map((e) => e.operation));
      for (const operation of operations)
        expect([...CHARGED_OPERATIONS, ...CREDIT_KINDS] as string[]).toContain(operation);
    },
  );

  it('a cached answer is charged the declared cached price and reports it', async () => {
    const op = entry('data');
    expect(op.cost.cachedCents).toBeDefined();
    await run(op, SAMPLE_INPUTS.data);
    const before = await ledger();
    const body = await run(op, { ...SAMPLE_INPUTS.data, cache_minutes: 60 });
    expect(body).toMatchObject({ from_cache: true, cost_cents: op.cost.cachedCents });
    const added = (await ledger()).length - before.length;
    expect(added).toBe(op.cost.cachedCents === 0 ? 0 : 1);
  });

  it('every price an entry declares is worded in its description by the faces, never in the entry itself', () => {
    for (const op of service.operations) {
      for (const cents of [op.cost.cents, op.cost.cachedCents].filter((c) => c !== undefined && c > 0))
        expect(`${op.summary} ${op.description}`, op.name).not.toMatch(new RegExp(`\\b${cents} cents?\\b`));
    }
  });
});
