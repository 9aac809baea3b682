/**
 * Writes the benchmark's prefill (shared/prefill.ts) into a PostgreSQL database through the store's own port:
 * migrate the schema (as an instance does at start), then `PostgresStore.transact` with putAccount,
 * appendLedger and putMemory, a batch of agents per transaction and a few transactions at a time, so the
 * rows are exactly what the service itself would write (ledger seq, update_seq, bytea and json columns).
 * Then VACUUM ANALYZE and a CHECKPOINT, so that the measurements start from a settled database (planner
 * statistics, visibility map, no insert-triggered autovacuum or checkpoint of the prefill's WAL under load).
 */
import pg from 'pg';
import type { LedgerEntry, Memory } from '../../src/core/model.js';
import { migrate } from '../../src/store/postgres/migrate.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { PrefillData } from '../shared/prefill.js';

/** Agents per transaction, and transactions in flight at once. */
const AGENTS_PER_TX = 20;
const CONCURRENT_TXS = 4;

export interface PostgresPrefill {
  /** How the rows were written. */
  method: string;
  migrateMs: number;
  /** The transactions that wrote the rows. */
  writeMs: number;
  /** VACUUM ANALYZE and CHECKPOINT afterwards. */
  settleMs: number;
  rows: { accounts: number; ledger: number; memories: number };
}

function byAgent<T extends { agentId: string }>(records: readonly T[]): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const record of records) {
    const list = map.get(record.agentId);
    if (list) list.push(record);
    else map.set(record.agentId, [record]);
  }
  return map;
}

export async function writePostgres(databaseUrl: string, data: PrefillData): Promise<PostgresPrefill> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const migrating = performance.now();
    await migrate(client);
    const migrateMs = performance.now() - migrating;

    const writing = performance.now();
    const ledger = byAgent<LedgerEntry>(data.ledger);
    const memories = byAgent<Memory>(data.memories);
    const store = new PostgresStore({
      connectionString: databaseUrl,
      poolMax: CONCURRENT_TXS,
      statementTimeoutMs: 60_000,
    });
    try {
      let next = 0;
      const worker = async () => {
        while (next < data.accounts.length) {
          const batch = data.accounts.slice(next, next + AGENTS_PER_TX);
          next += AGENTS_PER_TX;
          await store.transact(async (tx) => {
            for (const account of batch) {
              await tx.putAccount(account);
              for (const entry of ledger.get(account.id) ?? []) await tx.appendLedger(entry);
              for (const memory of memories.get(account.id) ?? []) await tx.putMemory(memory);
            }
          });
        }
      };
      await Promise.all(Array.from({ length: CONCURRENT_TXS }, worker));
    } finally {
      await store.close();
    }
    const writeMs = performance.now() - writing;

    const settling = performance.now();
    await client.query('VACUUM ANALYZE');
    await client.query('CHECKPOINT');
    const settleMs = performance.now() - settling;

    const { rows } = await client.query<{ accounts: string; ledger: string; memories: string }>(
      'SELECT (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM ledger) AS ledger, ' +
        '(SELECT count(*) FROM memories) AS memories',
    );
    const counts = {
      accounts: Number(rows[0]?.accounts),
      ledger: Number(rows[0]?.ledger),
      memories: Number(rows[0]?.memories),
    };
    if (
      counts.accounts !== data.accounts.length ||
      counts.ledger !== data.ledger.length ||
      counts.memories !== data.memories.length
    )
      throw new Error(
        `the PostgreSQL prefill wrote ${JSON.stringify(counts)}, expected ${data.accounts.length} accounts, ` +
          `${data.ledger.length} ledger entries and ${data.memories.length} memories`,
      );
    return {
      method:
        `the store's port (PostgresStore.transact: putAccount, appendLedger, putMemory), ${AGENTS_PER_TX} ` +
        `agents per transaction, ${CONCURRENT_TXS} transactions at a time`,
      migrateMs,
      writeMs,
      settleMs,
      rows: counts,
    };
  } finally {
    await client.end();
  }
}

/** The server's version string (`SELECT version()`), short: "PostgreSQL 15.x". */
export async function postgresVersion(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0]?.server_version ?? 'unknown';
  } finally {
    await client.end();
  }
}
