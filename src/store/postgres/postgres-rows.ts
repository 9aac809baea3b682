/**
 * Rows of the PostgreSQL store as the model's records: timestamps as ISO strings, bigints as numbers (refused
 * beyond what a double holds exactly), bytea as UTF-8 text, json as parsed.
 */
import type {
  Account,
  IdempotencyRecord,
  JsonObject,
  LedgerEntry,
  Memory,
  MemoryType,
  MemoryVersion,
} from '../../core/model.js';

export type Row = Record<string, unknown>;

export function iso(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

/** A bigint column as a number, refusing one beyond what a double holds exactly. */
export function int(value: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`the database returned ${String(value)}, not a safe integer`);
  return n;
}

export function text(value: unknown): string {
  return Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
}

export function toAccount(row: Row): Account {
  return {
    id: String(row.id),
    email: String(row.email),
    name: row.name === null ? null : text(row.name),
    plan: row.plan as Account['plan'],
    keyHash: String(row.key_hash),
    balanceCents: int(row.balance_cents),
    createdAt: iso(row.created_at),
  };
}

export function toLedgerEntry(row: Row): LedgerEntry {
  return {
    id: String(row.id),
    agentId: String(row.agent_id),
    at: iso(row.at),
    operation: row.operation as LedgerEntry['operation'],
    amountCents: int(row.amount_cents),
    balanceAfterCents: int(row.balance_after_cents),
    ...(row.cost_cents === null ? {} : { costCents: int(row.cost_cents) }),
    ...(row.plan === null ? {} : { plan: row.plan as LedgerEntry['plan'] }),
    ...(row.memory_key === null ? {} : { memoryKey: String(row.memory_key) }),
    ...(row.query_type === null ? {} : { queryType: row.query_type as LedgerEntry['queryType'] }),
    ...(row.query === null ? {} : { query: String(row.query) }),
    ...(row.idempotency_key === null ? {} : { idempotencyKey: String(row.idempotency_key) }),
    ...(row.client === null || row.client === undefined ? {} : { client: String(row.client) }),
  };
}

export function toMemory(row: Row): Memory {
  return {
    agentId: String(row.agent_id),
    key: String(row.key),
    value: text(row.value),
    type: row.type as MemoryType,
    metadata: row.metadata as JsonObject,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    version: int(row.version),
    ...(row.expires_at === null ? {} : { expiresAt: iso(row.expires_at) }),
    ...(row.ttl_seconds === null ? {} : { ttlSeconds: int(row.ttl_seconds) }),
  };
}

export function toMemoryVersion(row: Row): MemoryVersion {
  const base = {
    agentId: String(row.agent_id),
    key: String(row.key),
    version: int(row.version),
    at: iso(row.at),
  };
  if (row.deleted === true) return { ...base, deleted: true };
  return {
    ...base,
    value: text(row.value),
    type: row.type as MemoryType,
    metadata: row.metadata as JsonObject,
    ...(row.ttl_seconds === null ? {} : { ttlSeconds: int(row.ttl_seconds) }),
  };
}

export const HISTORY_COLUMNS = 'agent_id, key, version, at, deleted, value, type, metadata, ttl_seconds';

export function toIdempotencyRecord(row: Row): IdempotencyRecord {
  return {
    agentId: String(row.agent_id),
    key: String(row.key),
    fingerprint: String(row.fingerprint),
    operation: String(row.operation),
    status: int(row.status),
    body: row.body as JsonObject,
    createdAt: iso(row.created_at),
  };
}

export const ACCOUNT_COLUMNS = 'id, email, name, plan, key_hash, balance_cents, created_at';
export const MEMORY_COLUMNS =
  'agent_id, key, value, type, metadata, created_at, updated_at, version, expires_at, ttl_seconds';
export const LEDGER_COLUMNS =
  'agent_id, id, at, operation, amount_cents, balance_after_cents, cost_cents, plan, memory_key, query_type, query, idempotency_key, client';
