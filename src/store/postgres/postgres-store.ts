/**
 * The store port on PostgreSQL, for many instances sharing one database (issue 13). Plain SQL through a
 * `pg` pool; the schema is migrations/0001_initial.sql.
 *
 * - A transaction runs at READ COMMITTED on one pooled connection. Every read of an account inside a
 *   transaction locks that account's row (`FOR UPDATE`), and every core transaction on an existing agent
 *   reads its account first: so transactions that charge one agent run one after another, across every
 *   instance, while other agents' go on beside them.
 * - The work of a transaction may be run again after a serialization failure, a deadlock or a unique
 *   violation (a registration race: the second run finds the account and answers 409), so it must have no
 *   effect outside the transaction. Every `work` of the core is so.
 * - Money is enforced by the database too: no negative balance (a CHECK), each ledger entry once (the
 *   primary key (agent_id, seq), seq taken from the locked account row).
 * - Texts that may hold NUL (memory values, names) are bytea as UTF-8; metadata and stored responses are
 *   json (not jsonb), so they round-trip.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { AppError } from '../../core/errors.js';
import type {
  Account,
  IdempotencyRecord,
  JsonObject,
  LedgerEntry,
  Memory,
  MemoryType,
} from '../../core/model.js';
import { IDEMPOTENCY_RETENTION_MS } from '../../core/model.js';
import type {
  IdempotencyClaim,
  IdempotencyClaimRequest,
  StorePort,
  StoreReader,
  StoreTx,
} from '../../core/store-port.js';

/** SQLSTATEs after which a transaction's work is run again. */
const RETRYABLE = new Set(['40001', '40P01', '23505']);
const MAX_ATTEMPTS = 3;

type Queryable = Pick<pg.ClientBase, 'query'>;
type Row = Record<string, unknown>;

function iso(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

/** A bigint column as a number, refusing one beyond what a double holds exactly. */
function int(value: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`the database returned ${String(value)}, not a safe integer`);
  return n;
}

function text(value: unknown): string {
  return Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
}

function toAccount(row: Row): Account {
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

function toLedgerEntry(row: Row): LedgerEntry {
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
  };
}

function toMemory(row: Row): Memory {
  return {
    agentId: String(row.agent_id),
    key: String(row.key),
    value: text(row.value),
    type: row.type as MemoryType,
    metadata: row.metadata as JsonObject,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

function toIdempotencyRecord(row: Row): IdempotencyRecord {
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

const ACCOUNT_COLUMNS = 'id, email, name, plan, key_hash, balance_cents, created_at';
const MEMORY_COLUMNS = 'agent_id, key, value, type, metadata, created_at, updated_at';
const LEDGER_COLUMNS =
  'agent_id, id, at, operation, amount_cents, balance_after_cents, cost_cents, plan, memory_key, query_type, query';

/** Reads on a connection; `lock` makes account reads lock their row (inside a transaction). */
class PostgresReader implements StoreReader {
  constructor(
    protected readonly db: Queryable,
    private readonly lock: boolean,
  ) {}

  private async account(where: string, value: string): Promise<Account | undefined> {
    const { rows } = await this.db.query(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE ${where} = $1${this.lock ? ' FOR UPDATE' : ''}`,
      [value],
    );
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  getAccount(id: string) {
    return this.account('id', id);
  }

  findAccountByKeyHash(keyHash: string) {
    return this.account('key_hash', keyHash);
  }

  findAccountByEmail(email: string) {
    return this.account('email', email);
  }

  async listLedger(agentId: string, limit: number) {
    const { rows } = await this.db.query(
      `SELECT ${LEDGER_COLUMNS} FROM ledger WHERE agent_id = $1 ORDER BY seq DESC LIMIT $2`,
      [agentId, limit],
    );
    return rows.map(toLedgerEntry);
  }

  async getMemory(agentId: string, key: string) {
    const { rows } = await this.db.query(
      `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 AND key = $2`,
      [agentId, key],
    );
    return rows[0] ? toMemory(rows[0]) : undefined;
  }

  async listMemories(agentId: string, filter: { type?: MemoryType; limit: number }) {
    const { rows } =
      filter.type === undefined
        ? await this.db.query(
            `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 ORDER BY update_seq DESC LIMIT $2`,
            [agentId, filter.limit],
          )
        : await this.db.query(
            `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 AND type = $2 ` +
              'ORDER BY update_seq DESC LIMIT $3',
            [agentId, filter.type, filter.limit],
          );
    return rows.map(toMemory);
  }

  async countMemories(agentId: string) {
    const { rows } = await this.db.query('SELECT count(*) AS n FROM memories WHERE agent_id = $1', [agentId]);
    return int(rows[0]?.n ?? 0);
  }

  async spentSince(agentId: string, since: string) {
    // costOf: the cost when recorded, else what a debit took from the balance.
    const { rows } = await this.db.query(
      'SELECT coalesce(sum(coalesce(cost_cents, greatest(0, -amount_cents))), 0) AS spent ' +
        'FROM ledger WHERE agent_id = $1 AND at >= $2',
      [agentId, since],
    );
    return int(rows[0]?.spent ?? 0);
  }

  async getIdempotency(agentId: string, key: string) {
    const { rows } = await this.db.query(
      "SELECT * FROM idempotency WHERE agent_id = $1 AND key = $2 AND state = 'done'",
      [agentId, key],
    );
    return rows[0] ? toIdempotencyRecord(rows[0]) : undefined;
  }
}

class PostgresTx extends PostgresReader implements StoreTx {
  constructor(db: Queryable) {
    super(db, true);
  }

  async putAccount(account: Account) {
    await this.db.query(
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
    // The entry's seq comes from the account row (locked by the transaction's read of the account): a
    // second writer that skipped the lock would take the same seq and fail on the primary key.
    const { rows } = await this.db.query(
      'UPDATE accounts SET ledger_seq = ledger_seq + 1 WHERE id = $1 RETURNING ledger_seq',
      [entry.agentId],
    );
    if (!rows[0]) throw new Error(`appendLedger: no account ${entry.agentId}`);
    await this.db.query(
      `INSERT INTO ledger (${LEDGER_COLUMNS}, seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
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
        rows[0].ledger_seq,
      ],
    );
  }

  async putMemory(memory: Memory) {
    await this.db.query(
      `INSERT INTO memories (${MEMORY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ` +
        'ON CONFLICT (agent_id, key) DO UPDATE SET value = EXCLUDED.value, type = EXCLUDED.type, ' +
        'metadata = EXCLUDED.metadata, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at, ' +
        "update_seq = nextval('memories_update_seq')",
      [
        memory.agentId,
        memory.key,
        Buffer.from(memory.value, 'utf8'),
        memory.type,
        JSON.stringify(memory.metadata),
        memory.createdAt,
        memory.updatedAt,
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
      const { rowCount } = await this.db.query(
        "UPDATE idempotency SET state = 'done', fingerprint = $3, operation = $4, status = $5, body = $6, " +
          'created_at = $7, claim_token = NULL, lease_until = NULL ' +
          "WHERE agent_id = $1 AND key = $2 AND state = 'running' AND claim_token = $8",
        [...values, claimToken],
      );
      if (rowCount === 0) {
        // The lease ran out and another request took the key: this one must not charge.
        throw new AppError(
          'idempotency_in_progress',
          'This request took too long and another request with the same idempotency key took over; nothing ' +
            'was charged for this one. Retry with the same key to get that request’s response.',
          { field: 'idempotency_key' },
        );
      }
    } else {
      await this.db.query(
        'INSERT INTO idempotency (agent_id, key, fingerprint, operation, status, body, created_at, state) ' +
          "VALUES ($1, $2, $3, $4, $5, $6, $7, 'done') ON CONFLICT (agent_id, key) DO UPDATE SET " +
          "state = 'done', fingerprint = $3, operation = $4, status = $5, body = $6, created_at = $7, " +
          'claim_token = NULL, lease_until = NULL',
        values,
      );
    }
    // As the JSON store: records older than the retention before this one may go.
    await this.db.query("DELETE FROM idempotency WHERE state = 'done' AND created_at < $1", [
      new Date(Date.parse(record.createdAt) - IDEMPOTENCY_RETENTION_MS).toISOString(),
    ]);
  }
}

export interface PostgresStoreOptions {
  connectionString: string;
  /** Connections in this instance's pool. */
  poolMax?: number;
  /** Longest a statement may run, ms. */
  statementTimeoutMs?: number;
}

export class PostgresStore implements StorePort {
  private readonly pool: pg.Pool;
  private closed = false;

  constructor(options: PostgresStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolMax ?? 10,
      statement_timeout: options.statementTimeoutMs ?? 5000,
    });
    // An idle connection that dies (the database restarted) must not take the process with it.
    this.pool.on('error', () => undefined);
  }

  async transact<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    this.assertOpen();
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      try {
        await client.query('BEGIN');
        const result = await work(new PostgresTx(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        const code = (err as { code?: string }).code;
        if (attempt < MAX_ATTEMPTS && code !== undefined && RETRYABLE.has(code)) continue;
        throw err;
      } finally {
        client.release();
      }
    }
  }

  async read<T>(work: (reader: StoreReader) => Promise<T>): Promise<T> {
    this.assertOpen();
    return work(new PostgresReader(this.pool, false));
  }

  async claimIdempotency(request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    this.assertOpen();
    const token = randomUUID();
    const leaseUntil = new Date(Date.parse(request.now) + request.leaseMs).toISOString();
    // Take the key when it is free, when its claim's lease has run out, or when its record is past the
    // retention; otherwise leave the row as it is and say what holds it.
    const { rows } = await this.pool.query(
      'INSERT INTO idempotency AS i (agent_id, key, fingerprint, operation, state, claim_token, lease_until, ' +
        "created_at) VALUES ($1, $2, $3, $4, 'running', $5, $6, $7) ON CONFLICT (agent_id, key) DO UPDATE SET " +
        "fingerprint = $3, operation = $4, state = 'running', claim_token = $5, lease_until = $6, " +
        'created_at = $7, status = NULL, body = NULL ' +
        "WHERE (i.state = 'running' AND i.lease_until <= $7) OR (i.state = 'done' AND i.created_at <= $8) " +
        'RETURNING claim_token',
      [
        request.agentId,
        request.key,
        request.fingerprint,
        request.operation,
        token,
        leaseUntil,
        request.now,
        request.storedAfter,
      ],
    );
    if (rows[0]?.claim_token === token) return { state: 'claimed', token };
    const held = await this.pool.query('SELECT * FROM idempotency WHERE agent_id = $1 AND key = $2', [
      request.agentId,
      request.key,
    ]);
    const row = held.rows[0];
    if (!row) return this.claimIdempotency(request); // released between the two statements: try again
    if (row.state === 'done') return { state: 'stored', record: toIdempotencyRecord(row) };
    return { state: 'running', fingerprint: String(row.fingerprint) };
  }

  async releaseIdempotency(agentId: string, key: string, token: string): Promise<void> {
    await this.pool.query(
      "DELETE FROM idempotency WHERE agent_id = $1 AND key = $2 AND state = 'running' AND claim_token = $3",
      [agentId, key, token],
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  status(): 'open' | 'failed' | 'closed' {
    return this.closed ? 'closed' : 'open';
  }

  private async connect(): Promise<pg.PoolClient> {
    return this.pool.connect();
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('internal', 'The store is closed; the service is shutting down.');
  }
}
