/**
 * The store contract suite's stores and helpers: the same tests of the charge port (core/charge-port.ts) run
 * against each store directly (no core operation, no HTTP), so that a rule one store repeats (the PL/pgSQL
 * functions of PostgreSQL copy the core's rule functions the JSON store runs) cannot drift without a test
 * failing on that store alone. Every test names its exact expected values; `contractSuite` also checks, after
 * each test, that every account it made holds the sum of its ledger.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import type {
  ChargeClaim,
  Charged,
  ChargeRequest,
  ImportItem,
  ImportPlanner,
  StoreItem,
  WriteRules,
} from '../../../src/core/charge-port.js';
import type { JsonObject, Memory, MemoryVersion, Plan } from '../../../src/core/model.js';
import type { StorePort } from '../../../src/core/store-port.js';
import { openJsonFileStore } from '../../../src/store/json/json-file-store.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { testDatabase } from '../../helpers/postgres.js';

export type StoreKind = 'json' | 'postgres';

interface Adapter {
  name: string;
  kind: StoreKind;
  open(): Promise<{ store: StorePort; cleanup(): Promise<void> }>;
}

const ADAPTERS: Adapter[] = [
  {
    name: 'JSON file',
    kind: 'json',
    open: async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'ac-charge-contract-'));
      const holder = { pid: process.pid, command: 'test', startedAt: new Date().toISOString() };
      const { store } = await openJsonFileStore(dir, holder);
      return {
        store,
        cleanup: async () => {
          await store.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL',
    kind: 'postgres',
    open: async () => {
      const { url } = await testDatabase({ label: 'charge_contract' });
      const store = new PostgresStore({ connectionString: url });
      return { store, cleanup: () => store.close() };
    },
  },
];

/** What a test of the suite gets: its store, and accounts to charge. */
export interface Harness {
  readonly kind: StoreKind;
  readonly store: StorePort;
  /**
   * A new account, credited `cents` by one `top_up` entry (its ledger's seq 1, a day before T0), on `plan`;
   * checked at the test's end: its balance is the sum of its ledger.
   */
  agent(options?: { cents?: number; plan?: Plan }): Promise<string>;
}

/** Runs `body`'s tests against every store, each store opened once for the file. */
export function contractSuite(title: string, body: (h: Harness) => void): void {
  for (const adapter of ADAPTERS) {
    describe(`${title}: ${adapter.name}`, () => {
      let opened: { store: StorePort; cleanup(): Promise<void> } | undefined;
      const made: string[] = [];
      const harness: Harness = {
        kind: adapter.kind,
        get store() {
          if (!opened) throw new Error('the store is not open');
          return opened.store;
        },
        agent: async ({ cents = 100, plan = 'pay-as-you-go' } = {}) => {
          const id = `agent_${adapter.kind}_${++agents}`;
          await fund(harness.store, id, cents, plan);
          made.push(id);
          return id;
        },
      };
      beforeAll(async () => {
        opened = await adapter.open();
      });
      afterAll(async () => {
        await opened?.cleanup();
      });
      afterEach(async () => {
        for (const id of made.splice(0)) await expectBalanceIsLedgerSum(harness.store, id);
      });
      body(harness);
    });
  }
}

let agents = 0;

async function fund(store: StorePort, id: string, cents: number, plan: Plan): Promise<void> {
  await store.transact(async (tx) => {
    const account = {
      id,
      email: `${id}@example.com`,
      name: null,
      plan,
      keyHash: `hash-${id}`,
      balanceCents: 0,
      createdAt: at(-86_400),
    };
    await tx.putAccount(account);
    await tx.appendLedger({
      id: `txn_${id}_credit`,
      agentId: id,
      at: at(-86_400),
      operation: 'top_up',
      amountCents: cents,
      balanceAfterCents: cents,
    });
    await tx.putAccount({ ...account, balanceCents: cents });
  });
}

/** The account's balance is the sum of its ledger's amounts, and the newest entry's balance after it. */
export async function expectBalanceIsLedgerSum(store: StorePort, agentId: string): Promise<void> {
  const { account, ledger } = await store.read(async (r) => ({
    account: await r.getAccount(agentId),
    ledger: await r.listLedger(agentId, 10_000),
  }));
  const sum = ledger.reduce((total, entry) => total + entry.amountCents, 0);
  expect(account?.balanceCents, `balance of ${agentId} against its ledger`).toBe(sum);
  expect(ledger[0]?.balanceAfterCents ?? 0).toBe(sum);
}

/** T0 of every test: noon UTC of the day whose start is SINCE. */
const T0 = Date.parse('2026-03-10T12:00:00.000Z');
export const SINCE = '2026-03-10T00:00:00.000Z';

/** The instant `seconds` after T0 (ISO). */
export function at(seconds = 0): string {
  return new Date(T0 + seconds * 1000).toISOString();
}

export const RULES: WriteRules = { quota: 10, keep: 5, retentionSeconds: 3600 };

let entries = 0;

/** A charge of 1 cent for a memory_store at T0 with no daily limit, but for `fields`. */
export function request(agentId: string, fields: Partial<ChargeRequest> = {}): ChargeRequest {
  return {
    agentId,
    at: at(0),
    cents: 1,
    operation: 'memory_store',
    entryId: `txn_contract_${++entries}`,
    ref: {},
    daily: { since: SINCE },
    ...fields,
  };
}

/** A memory_store item of `key`: a context with no metadata, but for `fields`. */
export function item(key: string, value = 'v', fields: Partial<StoreItem> = {}): StoreItem {
  return { key, value, type: 'context', metadata: {}, ...fields };
}

/** A memory as a store writes it at T0 (version 1), but for `fields`. */
export function memory(agentId: string, key: string, fields: Partial<Memory> = {}): Memory {
  return {
    agentId,
    key,
    value: 'v',
    type: 'context',
    metadata: {},
    createdAt: at(0),
    updatedAt: at(0),
    version: 1,
    ...fields,
  };
}

/** A history entry of a stored version (as `memory` writes it), but for `fields`. */
export function version(agentId: string, key: string, fields: Partial<MemoryVersion> = {}): MemoryVersion {
  return { agentId, key, version: 1, at: at(0), value: 'v', type: 'context', metadata: {}, ...fields };
}

/** A delete marker. */
export function marker(agentId: string, key: string, number: number, when: string): MemoryVersion {
  return { agentId, key, version: number, at: when, deleted: true };
}

/** The outcome, which must not be a refusal. */
export function done<T extends object>(outcome: Charged<T>): T & { balanceCents: number } {
  if (outcome.refused !== undefined) throw new Error(`refused: ${JSON.stringify(outcome)}`);
  return outcome;
}

/** Stores `items` as one memory_store (or a batch of them), free, at `when`. */
export async function put(
  h: Harness,
  agentId: string,
  items: StoreItem[],
  when = at(0),
  rules: WriteRules = RULES,
): Promise<Memory[]> {
  const operation = items.length === 1 ? 'memory_store' : 'memory_store_batch';
  const outcome = await h.store.charges.storeMemories(
    request(agentId, { at: when, cents: 0, operation }),
    items,
    rules,
  );
  return done(outcome).results.map((r) => r.memory);
}

/** Deletes a live memory as the core's memory_delete does (core/memories.ts): its marker takes the next version. */
export async function remove(h: Harness, agentId: string, key: string, when: string, keep = RULES.keep) {
  await h.store.transact(async (tx) => {
    const existing = await tx.getMemory(agentId, key);
    if (!existing || (existing.expiresAt !== undefined && existing.expiresAt <= when)) {
      throw new Error(`no live memory ${key} to delete`);
    }
    await tx.deleteMemory(agentId, key);
    await tx.putMemoryVersion(
      { agentId, key, version: existing.version + 1, at: when, deleted: true },
      Math.max(keep, 1),
    );
  });
}

/** A claim as the port takes it, with the operation the key was claimed under (what its record names). */
export type HeldClaim = ChargeClaim & { operation: string };

/** A claim on an idempotency key, as the core takes it before a charge (core/idempotency.ts). */
export async function claim(
  store: StorePort,
  agentId: string,
  key: string,
  operation: string,
): Promise<HeldClaim> {
  const fingerprint = `fingerprint of ${key}`;
  const claimed = await store.claimIdempotency({
    agentId,
    key,
    fingerprint,
    operation,
    now: at(0),
    storedAfter: at(-86_400),
    leaseMs: 60_000,
  });
  if (claimed.state !== 'claimed') throw new Error(`the key ${key} was not free: ${claimed.state}`);
  return { key, token: claimed.token, fingerprint, operation };
}

/** The record kept for `claim` is the answer `body`, byte for byte, finished by a request at `when`. */
export async function expectKept(
  store: StorePort,
  agentId: string,
  kept: HeldClaim,
  when: string,
  body: JsonObject,
): Promise<void> {
  const record = await store.read((r) => r.getIdempotency(agentId, kept.key));
  expect(record).toStrictEqual({
    agentId,
    key: kept.key,
    fingerprint: kept.fingerprint,
    operation: kept.operation,
    status: 200,
    body,
    createdAt: when,
  });
  expect(JSON.stringify(record?.body)).toBe(JSON.stringify(body));
}

/** Everything of the agent's a charge may change, to compare before and after a refusal. */
export async function stateOf(
  store: StorePort,
  agentId: string,
  keys: readonly string[] = [],
  idempotencyKeys: readonly string[] = [],
) {
  const read = await store.read(async (r) => {
    const history: Record<string, MemoryVersion[]> = {};
    for (const key of keys) history[key] = await r.listMemoryVersions(agentId, key, 1000);
    const records: Record<string, unknown> = {};
    for (const key of idempotencyKeys) records[key] = await r.getIdempotency(agentId, key);
    return {
      account: await r.getAccount(agentId),
      ledger: await r.listLedger(agentId, 1000),
      memories: await r.listMemories(agentId, { limit: 1000 }),
      count: await r.countMemories(agentId),
      history,
      records,
    };
  });
  const newest = await store.ledgerPage(agentId, { limit: 1 });
  return { ...read, newestSeq: newest.next };
}

/** `run` is refused as `refusal` and changes nothing of the agent's (`keys`: the memory keys to compare). */
export async function expectRefused(
  store: StorePort,
  agentId: string,
  keys: readonly string[],
  run: () => Promise<Charged<object>>,
  refusal: object,
  idempotencyKeys: readonly string[] = [],
): Promise<void> {
  const before = await stateOf(store, agentId, keys, idempotencyKeys);
  expect(await run()).toStrictEqual(refusal);
  expect(await stateOf(store, agentId, keys, idempotencyKeys)).toStrictEqual(before);
}

/** The seq of the agent's newest ledger entry (with an older one before it: the credit of `agent`). */
export async function newestSeq(store: StorePort, agentId: string): Promise<number | undefined> {
  return (await store.ledgerPage(agentId, { limit: 1 })).next;
}

/** The agent's ledger, newest first. */
export function ledgerOf(store: StorePort, agentId: string) {
  return store.read((r) => r.listLedger(agentId, 1000));
}

export function memoryOf(store: StorePort, agentId: string, key: string) {
  return store.read((r) => r.getMemory(agentId, key));
}

export function historyOf(store: StorePort, agentId: string, key: string) {
  return store.read((r) => r.listMemoryVersions(agentId, key, 1000));
}

/**
 * An import planner as the core's (core/memory-transfer.ts) makes one: each line against the live memory the
 * reader holds at the plan's instant (its `plannedVersion`), the price `cents`, the answer `answer`. Counts its
 * plans: PostgreSQL plans on a read and writes in one statement if nothing planned on changed since.
 */
export function planner(
  agentId: string,
  lines: (Omit<ImportItem, 'plannedVersion' | 'kept'> & { kept?: ImportItem['kept'] })[],
  cents: number,
  answer: JsonObject,
): ImportPlanner & { plans: number } {
  const plan = async (reader: Parameters<ImportPlanner>[0], when: Date) => {
    plan.plans++;
    const items: ImportItem[] = [];
    for (const { kept = {}, ...line } of lines) {
      const existing = await reader.getMemory(agentId, line.key);
      const live = existing && (existing.expiresAt === undefined || existing.expiresAt > when.toISOString());
      items.push({ ...line, plannedVersion: live ? existing.version : null, kept });
    }
    return { items, cents, answer };
  };
  plan.plans = 0;
  return plan;
}
