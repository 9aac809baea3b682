/**
 * The ceiling of the PostgreSQL rows (issue 32): a bare Express 5 app with `pg` doing by hand, on the same
 * database and with the same pool size as the service's instances, the transaction a developer writes for a
 * charged read (memory_retrieve) and a charged write (memory_store), on the paths and with the requests of
 * those scenarios: BEGIN; the account, found by its key's hash and locked (SELECT … FOR UPDATE); the memory
 * read (or upserted); the ledger entry (its seq the account's next); the balance; COMMIT. Plain parameterized
 * queries through `pool.connect()`, as the node-postgres guide's transaction example has them. What it writes
 * is what the service would (a ledger entry per charge, seq and balance kept), so both share the database.
 * Run as a child process (start-ceilings.ts) with DATABASE_URL and POOL_MAX; prints its URL on stderr.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import express, { type Response } from 'express';
import pg from 'pg';
import { listenOnLoopback } from './listen.js';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 10),
});
pool.on('error', () => undefined);

const app = express();
app.use(express.json());

type Client = pg.PoolClient;

/** BEGIN; the account of the request's key, locked; `work`; COMMIT (ROLLBACK and an error on a refusal). */
async function charged(
  operation: 'memory_retrieve' | 'memory_store',
  key: string | undefined,
  res: Response,
  work: (client: Client, account: { id: string; balance_cents: string }) => Promise<object | number>,
) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const hash = createHash('sha256')
      .update(key ?? '')
      .digest('hex');
    const { rows } = await client.query(
      'SELECT id, balance_cents, ledger_seq FROM accounts WHERE key_hash = $1 FOR UPDATE',
      [hash],
    );
    const account = rows[0];
    if (!account) return refuse(client, res, 401);
    if (Number(account.balance_cents) < 1) return refuse(client, res, 402);
    const answer = await work(client, account);
    if (typeof answer === 'number') return refuse(client, res, answer);
    await client.query(
      'INSERT INTO ledger (agent_id, seq, id, at, operation, amount_cents, balance_after_cents, cost_cents, ' +
        'memory_key) VALUES ($1, $2, $3, $4, $5, -1, $6, 1, $7)',
      [
        account.id,
        Number(account.ledger_seq) + 1,
        `txn_${randomUUID()}`,
        new Date().toISOString(),
        operation,
        Number(account.balance_cents) - 1,
        (answer as { memory_key: string }).memory_key,
      ],
    );
    await client.query(
      'UPDATE accounts SET balance_cents = balance_cents - 1, ledger_seq = ledger_seq + 1 WHERE id = $1',
      [account.id],
    );
    await client.query('COMMIT');
    res.json({
      success: true,
      memory: answer,
      cost_cents: 1,
      credit_balance_cents: Number(account.balance_cents) - 1,
    });
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    res.status(500).json({ error: String((err as Error).message) });
  } finally {
    client.release();
  }
}

async function refuse(client: Client, res: Response, status: number) {
  await client.query('ROLLBACK');
  res.status(status).json({ error: `refused (${status})` });
}

app.get('/api/ac/memory', (req, res) =>
  charged('memory_retrieve', req.get('x-api-key'), res, async (client, account) => {
    const { rows } = await client.query(
      'SELECT key, value, type, metadata, created_at, updated_at, version, expires_at FROM memories ' +
        'WHERE agent_id = $1 AND key = $2',
      [account.id, req.query.memory_key],
    );
    const memory = rows[0];
    if (!memory) return 404;
    return {
      memory_key: memory.key,
      memory_value: memory.value.toString('utf8'),
      memory_type: memory.type,
      metadata: memory.metadata,
      created_at: memory.created_at,
      updated_at: memory.updated_at,
      version: memory.version,
      expires_at: memory.expires_at,
    };
  }),
);

app.post('/api/ac/memory', (req, res) =>
  charged('memory_store', req.get('x-api-key'), res, async (client, account) => {
    const { memory_key: key, memory_value: value, memory_type: type, metadata } = req.body ?? {};
    const now = new Date().toISOString();
    const { rows } = await client.query(
      'INSERT INTO memories AS m (agent_id, key, value, type, metadata, created_at, updated_at) ' +
        'VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (agent_id, key) DO UPDATE SET value = EXCLUDED.value, ' +
        'type = EXCLUDED.type, metadata = EXCLUDED.metadata, updated_at = EXCLUDED.updated_at, ' +
        "version = m.version + 1, update_seq = nextval('memories_update_seq') RETURNING created_at, version",
      [account.id, key, Buffer.from(String(value), 'utf8'), type, JSON.stringify(metadata ?? {}), now],
    );
    const row = rows[0];
    return {
      memory_key: key,
      memory_value: value,
      memory_type: type,
      metadata: metadata ?? {},
      created_at: row.created_at,
      updated_at: now,
      version: row.version,
      expires_at: null,
    };
  }),
);

listenOnLoopback(createServer(app), 'textbook express', () => pool.end());
