/**
 * The benchmark's prefill: N memories over A agents, each agent with a large balance, generated once
 * (`generatePrefill`) and then written to a fresh DATA_DIR as the JSON store's snapshot file
 * (`writeSnapshot`, in the format `src/store/json/json-state.ts` reads) or into a PostgreSQL database
 * (`writePostgres` in postgres/prefill-postgres.ts), so that both stores hold the same agents, accounts, ledger and
 * memories. Going through the API would take far too long at 100,000 memories.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Account, LedgerEntry, Memory } from '../../src/core/model.js';

export const STORE_FILE = 'agent-context.json';

/**
 * The snapshot file format (`Snapshot` in src/store/json/json-state.ts), restated here so that the benchmark
 * does not depend on the store's internals while they change; a store that cannot read it fails loudly.
 */
interface SnapshotFile {
  format: 'agent-context/1';
  accounts: Account[];
  memories: Memory[];
  ledger: LedgerEntry[];
}
export const STARTER_CENTS = 50;
export const TOP_UP_CENTS = 10_000_000;

export interface BenchAgent {
  id: string;
  key: string;
  /** Keys of the memories this agent holds after the prefill. */
  memoryKeys: string[];
}

export interface Prefilled {
  agents: BenchAgent[];
  memories: number;
  fileBytes: number;
  ms: number;
}

/** About 200 bytes of text; `seed` makes it differ between memories. */
export function memoryValue(seed: string | number): string {
  const head = `bench memory ${seed}: `;
  return (
    head +
    'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor '
      .repeat(3)
      .slice(0, 200 - head.length)
  );
}

export function memoryKeyOf(index: number): string {
  return `note.${index}`;
}

/** What the prefill writes, in agent order: each agent's account, its two credit entries and its memories. */
export interface PrefillData {
  agents: BenchAgent[];
  accounts: Account[];
  ledger: LedgerEntry[];
  memories: Memory[];
  /** Milliseconds the generation took. */
  ms: number;
}

export function generatePrefill(memories: number, agentCount: number): PrefillData {
  const started = performance.now();
  const base = Date.now() - 86_400_000; // a day ago
  const iso = (offsetMs: number) => new Date(base + offsetMs).toISOString();
  const accounts: Account[] = [];
  const ledger: LedgerEntry[] = [];
  const memoryRecords: Memory[] = [];
  const agents: BenchAgent[] = [];
  const perAgent = Math.floor(memories / agentCount);
  const extra = memories % agentCount;
  for (let i = 0; i < agentCount; i++) {
    const key = `ac_bench_${i}_${randomBytes(24).toString('base64url')}`;
    const id = `agt_${randomBytes(12).toString('base64url')}`;
    const createdAt = iso(i);
    accounts.push({
      id,
      email: `bench-${i}@example.com`,
      name: null,
      plan: 'pay-as-you-go',
      keyHash: createHash('sha256').update(key, 'utf8').digest('hex'),
      balanceCents: STARTER_CENTS + TOP_UP_CENTS,
      createdAt,
    });
    ledger.push(
      {
        id: `txn_${randomUUID()}`,
        agentId: id,
        at: createdAt,
        operation: 'starter_credit',
        amountCents: STARTER_CENTS,
        balanceAfterCents: STARTER_CENTS,
      },
      {
        id: `txn_${randomUUID()}`,
        agentId: id,
        at: createdAt,
        operation: 'top_up',
        amountCents: TOP_UP_CENTS,
        balanceAfterCents: STARTER_CENTS + TOP_UP_CENTS,
      },
    );
    const count = perAgent + (i < extra ? 1 : 0);
    const memoryKeys: string[] = [];
    for (let j = 0; j < count; j++) {
      const memoryKey = memoryKeyOf(j);
      const at = iso(1_000 + i * 1_000 + j);
      memoryKeys.push(memoryKey);
      memoryRecords.push({
        agentId: id,
        key: memoryKey,
        value: memoryValue(`${i}.${j}`),
        type: 'context',
        metadata: {},
        createdAt: at,
        updatedAt: at,
        version: 1,
      });
    }
    agents.push({ id, key, memoryKeys });
  }
  return { agents, accounts, ledger, memories: memoryRecords, ms: performance.now() - started };
}

/** Writes `data` as the JSON store's snapshot file in `dataDir`. */
export async function writeSnapshot(
  dataDir: string,
  data: PrefillData,
): Promise<{ fileBytes: number; ms: number }> {
  const started = performance.now();
  const snapshot: SnapshotFile = {
    format: 'agent-context/1',
    accounts: data.accounts,
    memories: data.memories,
    ledger: data.ledger,
  };
  // Compact, as the store itself writes it.
  const text = JSON.stringify(snapshot);
  await writeFile(path.join(dataDir, STORE_FILE), text, 'utf8');
  return { fileBytes: Buffer.byteLength(text), ms: performance.now() - started };
}

/** Generates and writes a JSON store's snapshot; `ms` counts both. */
export async function prefillStore(
  dataDir: string,
  memories: number,
  agentCount: number,
): Promise<Prefilled> {
  const data = generatePrefill(memories, agentCount);
  const written = await writeSnapshot(dataDir, data);
  return {
    agents: data.agents,
    memories: data.memories.length,
    fileBytes: written.fileBytes,
    ms: data.ms + written.ms,
  };
}
