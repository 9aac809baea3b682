/**
 * StoreReports on PostgreSQL: the usage endpoint's and the operator's reads, single statements on the pool
 * (committed state, no transaction). Days are UTC, read as text so that no time zone moves them.
 */
import type { CacheState } from '../../core/model.js';
import type { AccountPage, LedgerPage, StoreReports } from '../../core/store-port.js';
import { ACCOUNT_COLUMNS, int, LEDGER_COLUMNS, toAccount, toLedgerEntry } from './postgres-rows.js';
import { preparing, type Queryable } from './prepared.js';

const CREDIT_OPERATIONS = "('starter_credit', 'top_up', 'plan_change')";

export class PostgresReports implements StoreReports {
  private readonly db: Queryable;

  constructor(db: Queryable) {
    this.db = preparing(db);
  }

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

  async liveUsage(agentId: string | undefined, sinceDay: string) {
    const { rows } = await this.db.query(
      "SELECT agent_id, to_char(day, 'YYYY-MM-DD') AS day, state, count FROM live_usage " +
        'WHERE day >= $1::date AND ($2::text IS NULL OR agent_id = $2)',
      [sinceDay, agentId ?? null],
    );
    return rows.map((row) => ({
      agentId: String(row.agent_id),
      day: String(row.day),
      state: String(row.state) as CacheState,
      count: int(row.count),
    }));
  }

  async listAccounts(page: { limit: number; after?: string; emailContains?: string }): Promise<AccountPage> {
    // strpos, not LIKE: the e-mail fragment is text, with no wildcards of its own.
    const matches = '($1::text IS NULL OR strpos(email, $1) > 0)';
    const [found, total] = await Promise.all([
      this.db.query(
        `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE ${matches} AND ` +
          '($2::text IS NULL OR email COLLATE "C" > $2) ORDER BY email COLLATE "C" LIMIT $3',
        [page.emailContains ?? null, page.after ?? null, page.limit],
      ),
      this.db.query(`SELECT count(*) AS total FROM accounts WHERE ${matches}`, [page.emailContains ?? null]),
    ]);
    return { accounts: found.rows.map(toAccount), total: int(total.rows[0]?.total ?? 0) };
  }
}
