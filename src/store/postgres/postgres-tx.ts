/**
 * Writes of the PostgreSQL store, in one transaction on one connection (its statements pipelined:
 * tx-pipeline.ts). Its reads lock each account they read (postgres-reader.ts), so the transactions that charge
 * one agent run one after another across every instance; the ledger's seq comes from that locked row.
 */
import { AppError } from '../../core/errors.js';
import type { Account, IdempotencyRecord, LedgerEntry, Memory, MemoryVersion } from '../../core/model.js';
import type { LiveUsageCount, StoreTx } from '../../core/store-port.js';
import { SEARCH_VECTOR, searchTermsOf } from './memory-query-sql.js';
import { PostgresReader } from './postgres-reader.js';
import { ACCOUNT_COLUMNS, HISTORY_COLUMNS, LEDGER_COLUMNS, MEMORY_COLUMNS } from './postgres-rows.js';
import type { TxPipeline } from './tx-pipeline.js';

/** The SQLSTATE of the statement that finishes an idempotency claim when the claim is no longer this request's. */
const DIVISION_BY_ZERO = '22012';

export class PostgresTx extends PostgresReader implements StoreTx {
  /**
   * Each account as its row stands in this transaction, as far as this transaction read or wrote it: a
   * putAccount that would not change the row sends nothing (a debit's ledger entry already set the balance,
   * one round trip fewer per charge).
   */
  private readonly rows = new Map<string, Account>();

  constructor(private readonly pipeline: TxPipeline) {
    super(pipeline, true);
  }

  protected override sawAccount(account: Account): void {
    this.rows.set(account.id, account);
  }

  async putAccount(account: Account) {
    const row = this.rows.get(account.id);
    if (row && sameAccount(row, account)) return;
    this.rows.set(account.id, account);
    this.pipeline.write(
      `INSERT INTO accounts (${ACCOUNT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ` +
        'ON CONFLICT (id) DO UPDATE SET email = EXCLUDED.email, name = EXCLUDED.name, plan = EXCLUDED.plan, ' +
        'key_hash = EXCLUDED.key_hash, balance_cents = EXCLUDED.balance_cents',
      [
        account.id,
        account.email,
        account.name === null ? null : Buffer.from(account.name, 'utf8'),
        account.plan,
        account.keyHash,
        account.balanceCents,
        account.createdAt,
      ],
    );
  }

  async appendLedger(entry: LedgerEntry) {
    // The entry's seq comes from the account row (locked by the transaction's read of the account), taken
    // in the same statement: a second writer that skipped the lock would take the same seq and fail on the
    // primary key. Without the account, seq is NULL and the insert fails (NOT NULL): loudly, in the database,
    // so no answer needs checking before the commit.
    this.pipeline.write(
      'WITH next AS (UPDATE accounts SET ledger_seq = ledger_seq + 1, balance_cents = $13 WHERE id = $1 ' +
        'RETURNING ledger_seq) ' +
        `INSERT INTO ledger (${LEDGER_COLUMNS}, seq) ` +
        'SELECT $1, $2::text, $3::timestamptz, $4::text, $5::bigint, $6::bigint, $7::bigint, $8::text, $9::text, ' +
        '$10::text, $11::text, $12::text, $14::text, next.ledger_seq FROM (VALUES (1)) AS one LEFT JOIN next ON true',
      [
        entry.agentId,
        entry.id,
        entry.at,
        entry.operation,
        entry.amountCents,
        entry.balanceAfterCents,
        entry.costCents ?? null,
        entry.plan ?? null,
        entry.memoryKey ?? null,
        entry.queryType ?? null,
        entry.query ?? null,
        entry.idempotencyKey ?? null,
        entry.balanceAfterCents,
        entry.client ?? null,
      ],
    );
    // The balance is the last entry's balance after it: set in the same statement.
    const row = this.rows.get(entry.agentId);
    if (row) this.rows.set(entry.agentId, { ...row, balanceCents: entry.balanceAfterCents });
  }

  async putMemory(memory: Memory) {
    // The search column from the terms of the key ($11), the value ($12) and the metadata's values ($13).
    this.pipeline.write(
      `INSERT INTO memories (${MEMORY_COLUMNS}, search) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, ` +
        `${SEARCH_VECTOR('$11', '$12', '$13')}) ` +
        'ON CONFLICT (agent_id, key) DO UPDATE SET value = EXCLUDED.value, type = EXCLUDED.type, ' +
        'metadata = EXCLUDED.metadata, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, ' +
        'version = EXCLUDED.version, expires_at = EXCLUDED.expires_at, ttl_seconds = EXCLUDED.ttl_seconds, ' +
        "search = EXCLUDED.search, update_seq = nextval('memories_update_seq')",
      [
        memory.agentId,
        memory.key,
        Buffer.from(memory.value, 'utf8'),
        memory.type,
        JSON.stringify(memory.metadata),
        memory.createdAt,
        memory.updatedAt,
        memory.version,
        memory.expiresAt ?? null,
        memory.ttlSeconds ?? null,
        ...searchTermsOf(memory),
      ],
    );
  }

  async deleteMemory(agentId: string, key: string) {
    const { rowCount } = await this.db.query('DELETE FROM memories WHERE agent_id = $1 AND key = $2', [
      agentId,
      key,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async setMemoryExpiry(agentId: string, key: string, expiresAt: string) {
    // update_seq stays: a refresh is not an update, so the memory keeps its place in the update order.
    const { rowCount } = await this.db.query(
      'UPDATE memories SET expires_at = $3 WHERE agent_id = $1 AND key = $2',
      [agentId, key, expiresAt],
    );
    return rowCount === 1;
  }

  async putMemoryVersion(entry: MemoryVersion, keep: number) {
    // One statement adds the entry and keeps the newest `keep` - 1 of the rows before it (the DELETE does not
    // see the row its WITH inserts), by rank: a key's versions need not be consecutive.
    this.pipeline.write(
      `WITH added AS (INSERT INTO memory_history (${HISTORY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)) ` +
        'DELETE FROM memory_history WHERE agent_id = $1 AND key = $2 AND version NOT IN ' +
        '(SELECT version FROM memory_history WHERE agent_id = $1 AND key = $2 ORDER BY version DESC LIMIT $10::integer - 1)',
      [
        entry.agentId,
        entry.key,
        entry.version,
        entry.at,
        entry.deleted === true,
        entry.value === undefined ? null : Buffer.from(entry.value, 'utf8'),
        entry.type ?? null,
        entry.metadata === undefined ? null : JSON.stringify(entry.metadata),
        entry.ttlSeconds ?? null,
        keep,
      ],
    );
  }

  async dropMemoryVersions(agentId: string, key: string) {
    this.pipeline.write('DELETE FROM memory_history WHERE agent_id = $1 AND key = $2', [agentId, key]);
  }

  async addLiveUsage(counts: readonly LiveUsageCount[]) {
    if (counts.length === 0) return;
    // In key order, so that two instances adding to the same rows lock them in the same order.
    const sorted = [...counts].sort((a, b) =>
      `${a.agentId} ${a.day} ${a.state}` < `${b.agentId} ${b.day} ${b.state}` ? -1 : 1,
    );
    this.pipeline.write(
      'INSERT INTO live_usage AS u (agent_id, day, state, count) ' +
        'SELECT * FROM unnest($1::text[], $2::date[], $3::text[], $4::bigint[]) ' +
        'ON CONFLICT (agent_id, day, state) DO UPDATE SET count = u.count + EXCLUDED.count',
      [
        sorted.map((c) => c.agentId),
        sorted.map((c) => c.day),
        sorted.map((c) => c.state),
        sorted.map((c) => c.count),
      ],
    );
  }

  async putIdempotency(record: IdempotencyRecord, claimToken?: string) {
    const values = [
      record.agentId,
      record.key,
      record.fingerprint,
      record.operation,
      record.status,
      JSON.stringify(record.body),
      record.createdAt,
    ];
    if (claimToken !== undefined) {
      // Finishing the claim this request holds. Its lease may have run out and another request taken the key:
      // then no row matches, and the division by zero refuses the statement in the database, so the
      // transaction cannot commit without anyone waiting for this answer first.
      this.pipeline.write(
        "WITH done AS (UPDATE idempotency SET state = 'done', fingerprint = $3, operation = $4, status = $5, " +
          'body = $6, created_at = $7, claim_token = NULL, lease_until = NULL ' +
          "WHERE agent_id = $1 AND key = $2 AND state = 'running' AND claim_token = $8 RETURNING 1) " +
          'SELECT 1 / (SELECT count(*) FROM done)::integer',
        [...values, claimToken],
        (err) =>
          (err as { code?: unknown }).code === DIVISION_BY_ZERO
            ? new AppError(
                'idempotency_in_progress',
                'This request took too long and another request with the same idempotency key took over; ' +
                  'nothing was charged for this one. Retry with the same key to get that request’s response.',
                { field: 'idempotency_key' },
              )
            : err,
      );
    } else {
      this.pipeline.write(
        'INSERT INTO idempotency (agent_id, key, fingerprint, operation, status, body, created_at, state) ' +
          "VALUES ($1, $2, $3, $4, $5, $6, $7, 'done') ON CONFLICT (agent_id, key) DO UPDATE SET " +
          "state = 'done', fingerprint = $3, operation = $4, status = $5, body = $6, created_at = $7, " +
          'claim_token = NULL, lease_until = NULL',
        values,
      );
    }
    // Records past their retention are removed by the background sweep (postgres-sweeper.ts), not here:
    // a claim treats them as gone already, and a delete in every write would contend across agents.
  }
}

/** Whether two accounts are equal field by field (every field of Account is a primitive). */
function sameAccount(a: Account, b: Account): boolean {
  const keys = Object.keys(b) as (keyof Account)[];
  return keys.length === Object.keys(a).length && keys.every((key) => a[key] === b[key]);
}
