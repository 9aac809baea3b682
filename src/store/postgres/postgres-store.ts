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
  AccountPage,
  IdempotencyClaim,
  IdempotencyClaimRequest,
  LedgerPage,
  LedgerUsage,
  LiveUsageCount,
  StoreHealth,
  StorePort,
  StoreStats,
  StoreTx,
} from '../../core/store-port.js';
import type { StoreReader } from '../../core/store-reader.js';
import { createTransactionCharges } from '../transaction-charges.js';
import { PostgresCharges } from './postgres-charges.js';
import { isUnreachable, unavailable } from './postgres-errors.js';
import { PostgresReader } from './postgres-reader.js';
import { PostgresReports } from './postgres-reports.js';
import { toIdempotencyRecord } from './postgres-rows.js';
import { PostgresTx } from './postgres-tx.js';
import type { Statements } from './prepared.js';
import { StatementChannel } from './statement-channel.js';
import { TxPipeline } from './tx-pipeline.js';

/** SQLSTATEs after which a transaction's work is run again. */
const RETRYABLE = new Set(['40001', '40P01', '23505']);
const MAX_ATTEMPTS = 3;
/** A health check that takes longer than this counts as "unreachable". */
const HEALTH_TIMEOUT_MS = 2_000;

export interface PostgresStoreOptions {
  connectionString: string;
  /** Connections in this instance's pool. */
  poolMax?: number;
  /** Longest a statement may run, ms. */
  statementTimeoutMs?: number;
}

export class PostgresStore implements StorePort {
  private readonly pool: pg.Pool;
  private readonly reports: PostgresReports;
  /** Single statements, each its own transaction: reads, charges, what shares the database. */
  private readonly channel: StatementChannel;
  /** Reads outside a transaction, named, on the channel. */
  private readonly statements: Statements;
  /** The charge port: each charged operation as one statement (postgres-charges.ts). */
  readonly charges: PostgresCharges;
  private closed = false;

  constructor(options: PostgresStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolMax ?? 10,
      // A transaction's statements are sent without waiting for each answer (tx-pipeline.ts).
      pipeline: true,
      statement_timeout: options.statementTimeoutMs ?? 5000,
      // A database host that drops packets must not hold a request until the OS gives up on TCP (minutes):
      // a connection not made within this long fails as "unreachable" (503), like a refused one.
      connectionTimeoutMillis: options.statementTimeoutMs ?? 5000,
    });
    // An idle connection that dies (the database restarted) must not take the process with it.
    this.pool.on('error', () => undefined);
    this.channel = new StatementChannel({
      connectionString: options.connectionString,
      size: options.poolMax ?? 10,
      statementTimeoutMs: options.statementTimeoutMs ?? 5000,
      connectTimeoutMs: options.statementTimeoutMs ?? 5000,
    });
    this.statements = { query: (text, values) => this.channel.query(text, values) };
    this.reports = new PostgresReports(this.statements);
    this.charges = new PostgresCharges(
      {
        query: (text, values, affinity) => {
          this.assertOpen();
          return this.channel.query(text, values, affinity === undefined ? {} : { affinity });
        },
      },
      createTransactionCharges(this),
      (work) => this.read(work),
    );
  }

  /**
   * Single statements for what shares the database beside the store (the rate limits' window counters, the
   * live-data cache, OAuth records, semantic search's vectors), on the store's channel: each prepared by its
   * text, so their texts are fixed ones, as the store's own are. The store ends the channel on close.
   */
  get queryable(): Pick<pg.Pool, 'query'> {
    const channel = this.channel;
    return {
      query: ((text: string, values?: unknown[]) => channel.query(text, values ?? [])) as pg.Pool['query'],
    };
  }

  /** The pool's connections, for work that needs one connection for a while (the background sweep). */
  get connections(): Pick<pg.Pool, 'connect'> {
    return this.pool;
  }

  async transact<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    this.assertOpen();
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect().catch((err: unknown) => {
        throw isUnreachable(err) ? unavailable(err) : err;
      });
      const pipeline = new TxPipeline(client);
      let broken: Error | undefined;
      // While checked out, a client's connection error is nobody's unless listened for here: pg-pool removes
      // its idle listener, and an unhandled 'error' event would end the process (a database restart).
      const onError = (err: Error) => {
        broken ??= err;
      };
      client.on('error', onError);
      try {
        const result = await work(new PostgresTx(pipeline));
        await pipeline.commit();
        return result;
      } catch (err) {
        await pipeline.rollback().catch(() => undefined);
        // A connection lost before COMMIT was sent rolls the transaction back; during it, nobody knows.
        if (isUnreachable(err)) {
          broken = err as Error;
          throw unavailable(err, pipeline.committing);
        }
        const code = (err as { code?: string }).code;
        if (attempt < MAX_ATTEMPTS && code !== undefined && RETRYABLE.has(code)) continue;
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken); // a broken connection is dropped from the pool, not reused
      }
    }
  }

  async read<T>(work: (reader: StoreReader) => Promise<T>): Promise<T> {
    this.assertOpen();
    return this.reachable(() => work(new PostgresReader(this.statements, false)));
  }

  ledgerPage(agentId: string, page: { limit: number; before?: number }): Promise<LedgerPage> {
    this.assertOpen();
    return this.reachable(() => this.reports.ledgerPage(agentId, page));
  }

  ledgerUsage(agentId: string, since: string): Promise<LedgerUsage[]> {
    this.assertOpen();
    return this.reachable(() => this.reports.ledgerUsage(agentId, since));
  }

  liveUsage(agentId: string, sinceDay: string): Promise<LiveUsageCount[]> {
    this.assertOpen();
    return this.reachable(() => this.reports.liveUsage(agentId, sinceDay));
  }

  liveUsageTotals(sinceDay: string): Promise<Omit<LiveUsageCount, 'agentId'>[]> {
    this.assertOpen();
    return this.reachable(() => this.reports.liveUsageTotals(sinceDay));
  }

  listAccounts(page: { limit: number; after?: string; emailContains?: string }): Promise<AccountPage> {
    this.assertOpen();
    return this.reachable(() => this.reports.listAccounts(page));
  }

  stats(): StoreStats {
    // The transactions' pool and the statements' channel together (a channel connection is idle when it
    // carries nothing).
    const { totalCount, idleCount, waitingCount } = this.pool;
    const channel = this.channel.stats();
    return {
      pool: {
        total: totalCount + channel.open,
        idle: idleCount + Math.max(0, channel.open - channel.inFlight),
        waiting: waitingCount,
      },
    };
  }

  claimIdempotency(request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    this.assertOpen();
    return this.reachable(() => this.claim(request));
  }

  private async claim(request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const leaseUntil = new Date(Date.parse(request.now) + request.leaseMs).toISOString();
    // Take the key when it is free, when its claim's lease has run out, or when its record is past the
    // retention; otherwise leave the row as it is and say what holds it.
    const { rows } = await this.statements.query(
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
    const held = await this.statements.query('SELECT * FROM idempotency WHERE agent_id = $1 AND key = $2', [
      request.agentId,
      request.key,
    ]);
    const row = held.rows[0];
    if (!row) return this.claim(request); // released between the two statements: try again
    if (row.state === 'done') return { state: 'stored', record: toIdempotencyRecord(row) };
    return { state: 'running', fingerprint: String(row.fingerprint) };
  }

  async releaseIdempotency(agentId: string, key: string, token: string): Promise<void> {
    // A release that cannot reach the database leaves the claim to its lease, and must not turn the
    // request's own outcome into an error.
    await this.statements
      .query(
        "DELETE FROM idempotency WHERE agent_id = $1 AND key = $2 AND state = 'running' AND claim_token = $3",
        [agentId, key, token],
      )
      .catch((err: unknown) => {
        if (!isUnreachable(err)) throw err;
      });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.channel.close(), this.pool.end()]);
  }

  /** `ok` when the database answers a trivial query within HEALTH_TIMEOUT_MS, else `unreachable`. */
  async health(): Promise<StoreHealth> {
    if (this.closed) return 'closed';
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'unreachable'>((resolve) => {
      timer = setTimeout(() => resolve('unreachable'), HEALTH_TIMEOUT_MS);
    });
    const probe = this.channel.query('SELECT 1').then(
      () => 'ok' as const,
      () => 'unreachable' as const,
    );
    try {
      return await Promise.race([probe, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs `call`, its database-out-of-reach errors turned into the 503 that says nothing was done. */
  private async reachable<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw isUnreachable(err) ? unavailable(err) : err;
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('internal', 'The store is closed; the service is shutting down.');
  }
}
