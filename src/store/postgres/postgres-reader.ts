/**
 * Reads of the PostgreSQL store on one connection, or on the pool. Inside a transaction every account read
 * locks the account's row (`FOR UPDATE`), which serialises the transactions that charge one agent across
 * every instance (postgres-tx.ts).
 */
import type { Account } from '../../core/model.js';
import type { MemoryFilter, MemoryHit, MemoryQuery, StoreReader } from '../../core/store-reader.js';
import { memoryQueryStatements } from './memory-query-sql.js';
import {
  ACCOUNT_COLUMNS,
  HISTORY_COLUMNS,
  int,
  LEDGER_COLUMNS,
  MEMORY_COLUMNS,
  toAccount,
  toIdempotencyRecord,
  toLedgerEntry,
  toMemory,
  toMemoryVersion,
} from './postgres-rows.js';
import type { Statements } from './prepared.js';

type AccountKey = 'id' | 'key_hash' | 'email';

/**
 * The statements' texts, made once: each is prepared by its text (prepared.ts), and a text built again at every
 * call is hashed again at every call.
 */
const ACCOUNT_BY = (lock: boolean) =>
  Object.fromEntries(
    (['id', 'key_hash', 'email'] as const).map((key) => [
      key,
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE ${key} = $1${lock ? ' FOR UPDATE' : ''}`,
    ]),
  ) as Record<AccountKey, string>;
const ACCOUNT = { read: ACCOUNT_BY(false), locked: ACCOUNT_BY(true) };
const LEDGER = `SELECT ${LEDGER_COLUMNS} FROM ledger WHERE agent_id = $1 ORDER BY seq DESC LIMIT $2`;
const MEMORY = `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 AND key = $2`;
const MEMORIES = `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 AND key = ANY($2::text[])`;
// Without a type and with one, so that each is planned on its index. $3 NULL: expired ones too (a NULL
// expires_at never expires).
const LIVE = '($3::timestamptz IS NULL OR expires_at IS NULL OR expires_at > $3)';
const NEWEST = `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 AND ${LIVE} ORDER BY update_seq DESC LIMIT $2`;
const NEWEST_OF_TYPE =
  `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 AND ${LIVE} AND type = $4 ` +
  'ORDER BY update_seq DESC LIMIT $2';
const LIVE_BY_KEY = 'agent_id = $1 AND (expires_at IS NULL OR expires_at > $2)';
const BY_KEY = `SELECT ${MEMORY_COLUMNS} FROM memories WHERE ${LIVE_BY_KEY} ORDER BY key LIMIT $3`;
const BY_KEY_AFTER = `SELECT ${MEMORY_COLUMNS} FROM memories WHERE ${LIVE_BY_KEY} AND key > $4 ORDER BY key LIMIT $3`;
const VERSIONS = `SELECT ${HISTORY_COLUMNS} FROM memory_history WHERE agent_id = $1 AND key = $2 ORDER BY version DESC LIMIT $3`;

/**
 * Reads through `db` (the store's named statements, or a transaction's pipeline); `lock` makes account reads
 * lock their row (inside a transaction).
 */
export class PostgresReader implements StoreReader {
  private readonly accounts: Record<AccountKey, string>;

  constructor(
    protected readonly db: Statements,
    lock: boolean,
  ) {
    this.accounts = lock ? ACCOUNT.locked : ACCOUNT.read;
  }

  private async account(where: AccountKey, value: string): Promise<Account | undefined> {
    const { rows } = await this.db.query(this.accounts[where], [value]);
    const account = rows[0] ? toAccount(rows[0]) : undefined;
    if (account) this.sawAccount(account);
    return account;
  }

  /** Told of every account this reader read (a transaction remembers them: see PostgresTx.putAccount). */
  protected sawAccount(_account: Account): void {}

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
    const { rows } = await this.db.query(LEDGER, [agentId, limit]);
    return rows.map(toLedgerEntry);
  }

  async getMemory(agentId: string, key: string) {
    const { rows } = await this.db.query(MEMORY, [agentId, key]);
    return rows[0] ? toMemory(rows[0]) : undefined;
  }

  async getMemories(agentId: string, keys: readonly string[]) {
    if (keys.length === 0) return [];
    const { rows } = await this.db.query(MEMORIES, [agentId, keys]);
    return rows.map(toMemory);
  }

  async listMemories(agentId: string, filter: MemoryFilter) {
    const { rows } =
      filter.type === undefined
        ? await this.db.query(NEWEST, [agentId, filter.limit, filter.liveAt ?? null])
        : await this.db.query(NEWEST_OF_TYPE, [agentId, filter.limit, filter.liveAt ?? null, filter.type]);
    return rows.map(toMemory);
  }

  async listMemoriesByKey(agentId: string, page: { after?: string; limit: number; liveAt: string }) {
    const { rows } =
      page.after === undefined
        ? await this.db.query(BY_KEY, [agentId, page.liveAt, page.limit])
        : await this.db.query(BY_KEY_AFTER, [agentId, page.liveAt, page.limit, page.after]);
    return rows.map(toMemory);
  }

  async queryMemories(agentId: string, query: MemoryQuery) {
    const { page, count } = memoryQueryStatements(agentId, query);
    const { rows } = await this.db.query(page.text, page.values);
    const hits = rows.map(
      (row): MemoryHit => ({
        memory: toMemory(row),
        position: String(row.update_seq),
        ...(row.score === undefined ? {} : { score: Number(row.score) }),
      }),
    );
    // A first page shorter than the limit holds every match: no count needed.
    const whole = (query.after ?? query.offset ?? 0) === 0 && hits.length < query.limit;
    const total = whole ? hits.length : int((await this.db.query(count.text, count.values)).rows[0]?.n ?? 0);
    return { hits, total };
  }

  async countMemories(agentId: string, liveAt?: string) {
    const { rows } = await this.db.query(
      'SELECT count(*) AS n FROM memories WHERE agent_id = $1 ' +
        'AND ($2::timestamptz IS NULL OR expires_at IS NULL OR expires_at > $2)',
      [agentId, liveAt ?? null],
    );
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

  async listMemoryVersions(agentId: string, key: string, limit: number) {
    const { rows } = await this.db.query(VERSIONS, [agentId, key, limit]);
    return rows.map(toMemoryVersion);
  }

  async getIdempotency(agentId: string, key: string) {
    const { rows } = await this.db.query(
      "SELECT * FROM idempotency WHERE agent_id = $1 AND key = $2 AND state = 'done'",
      [agentId, key],
    );
    return rows[0] ? toIdempotencyRecord(rows[0]) : undefined;
  }
}
