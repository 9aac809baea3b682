/**
 * The authorization server's records (src/store/oauth-records.ts) in the `oauth_records` table
 * (migrations/0007_oauth.sql), shared by every instance on the database. Each call is one statement on the
 * store's pool, committed by itself, so every instance sees it once it resolves.
 *
 * - "Now" is the service's clock (`now`, epoch ms, sent with each statement), as the background sweeper's
 *   is: a record expires, and is consumed, by the clock the rest of the service keeps.
 * - `consume` is one UPDATE that only a record not yet consumed matches: of concurrent calls, the first to
 *   take the row lock wins, and the others, re-checking the row after it, match nothing.
 * - `putIfAbsent` is an INSERT ... ON CONFLICT that replaces only an expired row; when it leaves the row
 *   alone, the row is read in a statement of its own (which sees a concurrent insert, committed by then).
 * - Expired rows: absent to every read; the background sweep (`sweepTasks`) deletes them in batches.
 * - The pool is the PostgresStore's, which owns it and ends it on close.
 */
import type pg from 'pg';
import { checkOAuthRecord, isStorableKey, type OAuthRecord, type OAuthRecords } from '../oauth-records.js';
import { queryReachable } from './postgres-errors.js';
import type { Row } from './postgres-rows.js';
import { SWEEP_BATCH, type SweepTask } from './postgres-sweeper.js';

const COLUMNS = 'kind, id, payload, expires_at, grant_id, uid, user_code, account_id, consumed_at';
/** Unexpired at the instant `$n`. */
const LIVE = (n: number) => `(expires_at IS NULL OR expires_at > $${n}::timestamptz)`;

const PUT =
  `INSERT INTO oauth_records (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ` +
  'ON CONFLICT (kind, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at, ' +
  'grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid, user_code = EXCLUDED.user_code, ' +
  "account_id = EXCLUDED.account_id, consumed_at = EXCLUDED.consumed_at, put_seq = nextval('oauth_records_put_seq')";
/** PUT, but an existing row is replaced only when it has expired; the row is returned when written. */
const PUT_IF_ABSENT =
  `INSERT INTO oauth_records AS r (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ` +
  'ON CONFLICT (kind, id) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at, ' +
  'grant_id = EXCLUDED.grant_id, uid = EXCLUDED.uid, user_code = EXCLUDED.user_code, ' +
  "account_id = EXCLUDED.account_id, consumed_at = EXCLUDED.consumed_at, put_seq = nextval('oauth_records_put_seq') " +
  `WHERE r.expires_at IS NOT NULL AND r.expires_at <= $10::timestamptz RETURNING ${COLUMNS}`;
const GET = `SELECT ${COLUMNS} FROM oauth_records WHERE kind = $1 AND id = $2 AND ${LIVE(3)}`;
const BY_UID =
  `SELECT ${COLUMNS} FROM oauth_records WHERE kind = $1 AND uid = $2 AND ${LIVE(3)} ` +
  'ORDER BY put_seq DESC LIMIT 1';
const BY_USER_CODE =
  `SELECT ${COLUMNS} FROM oauth_records WHERE kind = $1 AND user_code = $2 AND ${LIVE(3)} ` +
  'ORDER BY put_seq DESC LIMIT 1';
const BY_ACCOUNT =
  `SELECT ${COLUMNS} FROM oauth_records WHERE kind = $1 AND account_id = $2 AND ${LIVE(3)} ` +
  'ORDER BY put_seq DESC';
const CONSUME =
  'UPDATE oauth_records SET consumed_at = $3::timestamptz ' +
  `WHERE kind = $1 AND id = $2 AND consumed_at IS NULL AND ${LIVE(3)} RETURNING 1`;
const DELETE = 'DELETE FROM oauth_records WHERE kind = $1 AND id = $2';
const DELETE_BY_GRANT = 'DELETE FROM oauth_records WHERE grant_id = $1';
/** Up to `$1` rows expired at `$2`, skipping rows a request holds. */
const SWEEP =
  'DELETE FROM oauth_records WHERE (kind, id) IN (SELECT kind, id FROM oauth_records ' +
  'WHERE expires_at <= $2::timestamptz LIMIT $1 FOR UPDATE SKIP LOCKED)';

/** A putIfAbsent that finds the row gone between its two statements (deleted meanwhile) starts again. */
const PUT_IF_ABSENT_ATTEMPTS = 5;

export interface PostgresOAuthRecordsOptions {
  /** The service's clock, epoch ms: records expire and are consumed by it. Date.now unless given. */
  now?: () => number;
}

export class PostgresOAuthRecords implements OAuthRecords {
  private readonly now: () => number;

  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    options: PostgresOAuthRecordsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  async put(record: OAuthRecord): Promise<void> {
    await this.query(PUT, valuesOf(record, checkOAuthRecord(record)));
  }

  async putIfAbsent(record: OAuthRecord): Promise<OAuthRecord> {
    const values = valuesOf(record, checkOAuthRecord(record));
    for (let attempt = 1; ; attempt++) {
      const { rows } = await this.query(PUT_IF_ABSENT, [...values, this.instant()]);
      if (rows[0] !== undefined) return toRecord(rows[0]);
      // A live row was there: read it (a statement of its own sees it, if another instance just inserted it).
      const existing = await this.get(record.kind, record.id);
      if (existing !== undefined) return existing;
      if (attempt === PUT_IF_ABSENT_ATTEMPTS) {
        throw new Error(
          `OAuth record ${record.kind} ${record.id} was deleted or expired each time it was about to be read.`,
        );
      }
    }
  }

  async get(kind: string, id: string): Promise<OAuthRecord | undefined> {
    return this.findOne(GET, kind, id);
  }

  async findByUid(kind: string, uid: string): Promise<OAuthRecord | undefined> {
    return this.findOne(BY_UID, kind, uid);
  }

  async findByUserCode(kind: string, userCode: string): Promise<OAuthRecord | undefined> {
    return this.findOne(BY_USER_CODE, kind, userCode);
  }

  async consume(kind: string, id: string): Promise<boolean> {
    if (!isStorableKey(kind) || !isStorableKey(id)) return false;
    const { rowCount } = await this.query(CONSUME, [kind, id, this.instant()]);
    return (rowCount ?? 0) > 0;
  }

  async delete(kind: string, id: string): Promise<void> {
    if (!isStorableKey(kind) || !isStorableKey(id)) return;
    await this.query(DELETE, [kind, id]);
  }

  async deleteByGrant(grantId: string): Promise<number> {
    if (!isStorableKey(grantId)) return 0;
    return (await this.query(DELETE_BY_GRANT, [grantId])).rowCount ?? 0;
  }

  async listByAccount(kind: string, accountId: string): Promise<OAuthRecord[]> {
    if (!isStorableKey(kind) || !isStorableKey(accountId)) return [];
    const { rows } = await this.query(BY_ACCOUNT, [kind, accountId, this.instant()]);
    return rows.map(toRecord);
  }

  async sweep(): Promise<number> {
    const now = this.instant();
    let total = 0;
    for (;;) {
      const count = (await this.query(SWEEP, [SWEEP_BATCH, now])).rowCount ?? 0;
      total += count;
      if (count < SWEEP_BATCH) return total;
    }
  }

  /** For the background sweeper (postgres-sweeper.ts): records expired by the sweeper's clock. */
  get sweepTasks(): readonly SweepTask[] {
    return [
      {
        name: 'oauth_records',
        run: async (db, batch, now) => (await db.query(SWEEP, [batch, now.toISOString()])).rowCount ?? 0,
      },
    ];
  }

  private async findOne(text: string, kind: string, value: string): Promise<OAuthRecord | undefined> {
    // A key PostgreSQL's text cannot hold (NUL) is no record's: nothing to ask.
    if (!isStorableKey(kind) || !isStorableKey(value)) return undefined;
    const { rows } = await this.query(text, [kind, value, this.instant()]);
    return rows[0] === undefined ? undefined : toRecord(rows[0]);
  }

  private instant(): string {
    return new Date(this.now()).toISOString();
  }

  /** Runs one statement, a database out of reach turned into the `unavailable` error. */
  private query(text: string, values: unknown[]): Promise<pg.QueryResult<Row>> {
    return queryReachable<Row>(this.pool, text, values);
  }
}

const instantOf = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** The values $1 to $9 of COLUMNS for `record`, whose payload is `payloadText`. */
function valuesOf(record: OAuthRecord, payloadText: string): unknown[] {
  return [
    record.kind,
    record.id,
    payloadText,
    instantOf(record.expiresAt),
    record.grantId ?? null,
    record.uid ?? null,
    record.userCode ?? null,
    record.accountId ?? null,
    instantOf(record.consumedAt),
  ];
}

const ms = (value: unknown) => (value instanceof Date ? value : new Date(String(value))).getTime();

function toRecord(row: Row): OAuthRecord {
  return {
    kind: String(row.kind),
    id: String(row.id),
    payload: row.payload as Record<string, unknown>,
    ...(row.expires_at === null ? {} : { expiresAt: ms(row.expires_at) }),
    ...(row.grant_id === null ? {} : { grantId: String(row.grant_id) }),
    ...(row.uid === null ? {} : { uid: String(row.uid) }),
    ...(row.user_code === null ? {} : { userCode: String(row.user_code) }),
    ...(row.account_id === null ? {} : { accountId: String(row.account_id) }),
    ...(row.consumed_at === null ? {} : { consumedAt: ms(row.consumed_at) }),
  };
}
