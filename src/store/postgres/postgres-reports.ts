/**
 * StoreReports on PostgreSQL: the usage endpoint's and the operator's reads, single named statements
 * (committed state, no transaction). Days are UTC, read as text so that no time zone moves them.
 */
import { type CacheState, CREDIT_KINDS } from '../../core/model.js';
import type { AccountPage, LedgerPage, StoreReports } from '../../core/store-port.js';
import { ACCOUNT_COLUMNS, int, LEDGER_COLUMNS, toAccount, toLedgerEntry } from './postgres-rows.js';
import type { Statements } from './prepared.js';

/** The ledger operations that are not charges, as an SQL list. */
const CREDIT_OPERATIONS = `(${CREDIT_KINDS.map((kind) => `'${kind}'`).join(', ')})`;

export class PostgresReports implements StoreReports {
  constructor(private readonly db: Statements) {}

  async ledgerPage(agentId: string, page: { limit: number; before?: number }): Promise<LedgerPage> {
    const { rows } = await this.db.query(
      `SELECT seq, ${LEDGER_COLUMNS} FROM ledger WHERE agent_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`,
      [agentId, page.before ?? Number.MAX_SAFE_INTEGER, page.limit + 1],
    );
    const entries = rows.slice(0, page.limit);
    const last = entries.at(-1);
    const more = rows.length > page.limit && last !== undefined;
    return { entries: entries.map(toLedgerEntry), ...(more ? { next: int(last.seq) } : {}) };
  }

  async ledgerUsage(agentId: string, since: string) {
    const { rows } = await this.db.query(
      "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, operation, count(*) AS charges, " +
        'sum(coalesce(cost_cents, greatest(0, -amount_cents))) AS spent FROM ledger ' +
        `WHERE agent_id = $1 AND at >= $2 AND operation NOT IN ${CREDIT_OPERATIONS} ` +
        'GROUP BY 1, 2 ORDER BY 1, 2',
      [agentId, since],
    );
    return rows.map((row) => ({
      day: String(row.day),
      operation: String(row.operation),
      charges: int(row.charges),
      spentCents: int(row.spent),
    }));
  }

  async liveUsage(agentId: string, sinceDay: string) {
    const { rows } = await this.db.query(
      "SELECT to_char(day, 'YYYY-MM-DD') AS day, state, count FROM live_usage " +
        'WHERE agent_id = $1 AND day >= $2::date',
      [agentId, sinceDay],
    );
    return rows.map((row) => ({
      agentId,
      day: String(row.day),
      state: String(row.state) as CacheState,
      count: int(row.count),
    }));
  }

  async liveUsageTotals(sinceDay: string) {
    const { rows } = await this.db.query(
      "SELECT to_char(day, 'YYYY-MM-DD') AS day, state, sum(count) AS count FROM live_usage " +
        'WHERE day >= $1::date GROUP BY day, state',
      [sinceDay],
    );
    return rows.map((row) => ({
      day: String(row.day),
      state: String(row.state) as CacheState,
      count: int(row.count),
    }));
  }

  /**
   * Accounts in the order of `accounts_email_c` (e-mail, byte order): a page after an e-mail reads the index
   * from there. A fragment is matched with strpos, not LIKE: it is text, with no wildcards of its own.
   */
  async listAccounts(page: { limit: number; after?: string; emailContains?: string }): Promise<AccountPage> {
    const conditions: string[] = [];
    const values: unknown[] = [];
    if (page.emailContains !== undefined) {
      values.push(page.emailContains);
      conditions.push(`strpos(email, $${values.length}) > 0`);
    }
    const matching = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const total = this.db.query(`SELECT count(*) AS total FROM accounts ${matching}`, [...values]);
    if (page.after !== undefined) {
      values.push(page.after);
      conditions.push(`email COLLATE "C" > $${values.length}`);
    }
    values.push(page.limit);
    const found = this.db.query(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''} ` +
        `ORDER BY email COLLATE "C" LIMIT $${values.length}`,
      values,
    );
    const [rows, counted] = await Promise.all([found, total]);
    return { accounts: rows.rows.map(toAccount), total: int(counted.rows[0]?.total ?? 0) };
  }
}
