/**
 * The schema of 0001_initial.sql on real PostgreSQL, as the adapter will rely on it: every field of the
 * model has a column; NUL and every other character round-trip byte for byte through the bytea and json
 * columns, and every character but NUL through a key's text; the database itself refuses a negative
 * balance and a second ledger entry with the same sequence number.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account, IdempotencyRecord, LedgerEntry, Memory } from '../../../src/core/model.js';
import { testDatabase } from '../../helpers/postgres.js';

/** The column of each field of the model: a field added to the model fails the type check until mapped. */
const ACCOUNT_COLUMNS: Record<keyof Account, string> = {
  id: 'id',
  email: 'email',
  name: 'name',
  plan: 'plan',
  keyHash: 'key_hash',
  balanceCents: 'balance_cents',
  createdAt: 'created_at',
};
const LEDGER_COLUMNS: Record<keyof LedgerEntry, string> = {
  id: 'id',
  agentId: 'agent_id',
  at: 'at',
  operation: 'operation',
  amountCents: 'amount_cents',
  balanceAfterCents: 'balance_after_cents',
  costCents: 'cost_cents',
  plan: 'plan',
  memoryKey: 'memory_key',
  queryType: 'query_type',
  query: 'query',
  idempotencyKey: 'idempotency_key',
  client: 'client',
};
const MEMORY_COLUMNS: Record<keyof Memory, string> = {
  agentId: 'agent_id',
  key: 'key',
  value: 'value',
  type: 'type',
  metadata: 'metadata',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  version: 'version',
  expiresAt: 'expires_at',
  ttlSeconds: 'ttl_seconds',
};
const IDEMPOTENCY_COLUMNS: Record<keyof IdempotencyRecord, string> = {
  agentId: 'agent_id',
  key: 'key',
  fingerprint: 'fingerprint',
  operation: 'operation',
  status: 'status',
  body: 'body',
  createdAt: 'created_at',
};

/** Every Unicode scalar value, U+0000 to U+10FFFF without the surrogates: 1,112,064 characters. */
const EVERY_CHAR = (() => {
  const parts: string[] = [];
  for (let start = 0; start <= 0x10ffff; start += 0x1000) {
    const codePoints: number[] = [];
    for (let cp = start; cp < start + 0x1000; cp++) if (cp < 0xd800 || cp > 0xdfff) codePoints.push(cp);
    parts.push(String.fromCodePoint(...codePoints));
  }
  return parts.join('');
})();

/** Postgres' error code (SQLSTATE) and constraint of a failed query. */
async function failure(query: Promise<unknown>): Promise<{ code?: string; constraint?: string }> {
  try {
    await query;
  } catch (err) {
    const { code, constraint } = err as pg.DatabaseError;
    return { code, constraint };
  }
  throw new Error('the query succeeded');
}

describe('the PostgreSQL schema (0001_initial.sql)', () => {
  let client: pg.Client;
  let agents = 0;

  /** A new account with `balance` cents; returns its id. */
  async function account(balance = 0, name: Buffer | null = null): Promise<string> {
    const id = `agent-${++agents}`;
    await client.query(
      `INSERT INTO accounts (id, email, key_hash, name, plan, balance_cents, created_at)
       VALUES ($1, $2, $3, $4, 'pay-as-you-go', $5, now())`,
      [id, `${id}@example.com`, `hash-${id}`, name, balance],
    );
    return id;
  }

  beforeAll(async () => {
    const db = await testDatabase({ label: 'schema' });
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(() => client?.end());

  it('has a column for every field of Account, LedgerEntry, Memory and IdempotencyRecord', async () => {
    const { rows } = await client.query(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'",
    );
    const columns = (table: string) => rows.filter((r) => r.table_name === table).map((r) => r.column_name);
    const expectColumns = (table: string, mapping: Record<string, string>, more: string[]) =>
      expect(columns(table).sort()).toEqual([...Object.values(mapping), ...more].sort());
    expectColumns('accounts', ACCOUNT_COLUMNS, ['ledger_seq', 'spent_day', 'spent_day_cents']);
    expectColumns('ledger', LEDGER_COLUMNS, ['seq']);
    expectColumns('memories', MEMORY_COLUMNS, [
      'update_seq',
      'search',
      'metadata_index',
      'embedding',
      'embedding_model',
      'embedding_version',
      'embedding_seq',
    ]);
    expectColumns('idempotency', IDEMPOTENCY_COLUMNS, ['state', 'claim_token', 'lease_until']);
    expect(columns('live_cache').sort()).toEqual(['fetched_at', 'key', 'value']);
    expect(columns('live_flights').sort()).toEqual(['key', 'lease_until', 'owner']);
    expect(columns('rate_limits').sort()).toEqual(['hits', 'key', 'window_start']);
  });

  it('NUL and every other character round-trip byte for byte through memories.value (bytea) and metadata (json)', async () => {
    expect([...EVERY_CHAR]).toHaveLength(0x110000 - 0x800); // code points
    const value = Buffer.from(EVERY_CHAR, 'utf8');
    const metadata = { every: EVERY_CHAR, '\u0000': '\u0000', nested: { list: ['a\u0000b', { '': 'NUL' }] } };
    const metadataText = JSON.stringify(metadata);
    const agent = await account(0, Buffer.from('a name with \u0000 in it', 'utf8'));
    await client.query(
      `INSERT INTO memories (agent_id, key, value, type, metadata, created_at, updated_at)
       VALUES ($1, 'every character', $2, 'fact', $3, now(), now())`,
      [agent, value, metadataText],
    );
    const { rows } = await client.query(
      'SELECT value, metadata, metadata::text AS metadata_text FROM memories WHERE agent_id = $1',
      [agent],
    );
    const [row] = rows;
    expect(Buffer.compare(row.value, value)).toBe(0);
    expect(row.value.toString('utf8') === EVERY_CHAR).toBe(true);
    expect(row.metadata_text === metadataText).toBe(true); // json keeps the text as sent
    expect(row.metadata).toEqual(metadata);

    // An account's name (the API accepts NUL in it) and a stored response (json) too.
    const { rows: named } = await client.query('SELECT name FROM accounts WHERE id = $1', [agent]);
    expect(named[0].name.toString('utf8')).toBe('a name with \u0000 in it');
    const body = JSON.stringify({ memory: { memory_value: EVERY_CHAR.slice(0, 5000) } });
    await client.query(
      `INSERT INTO idempotency (agent_id, key, fingerprint, operation, state, status, body, created_at)
       VALUES ($1, 'k', 'f', 'memory_retrieve', 'done', 200, $2, now())`,
      [agent, body],
    );
    const { rows: stored } = await client.query(
      'SELECT body::text AS body FROM idempotency WHERE agent_id = $1',
      [agent],
    );
    expect(stored[0].body === body).toBe(true);

    // Why not text and jsonb: both refuse NUL.
    expect(await failure(client.query("SELECT 'a' || $1 AS t", ['\u0000']))).toMatchObject({ code: '22021' });
    expect(await failure(client.query('SELECT $1::jsonb', [JSON.stringify({ a: '\u0000' })]))).toMatchObject({
      code: '22P05',
    });
  });

  it('every character but NUL round-trips through a key\'s text; keys sort by code point (COLLATE "C")', async () => {
    const agent = await account();
    // Keys of 256 characters, the API's longest (at most 1 KiB of UTF-8: well within a btree entry).
    const chars = [...EVERY_CHAR.slice(1)];
    const keys: string[] = [];
    for (let i = 0; i < chars.length; i += 256) keys.push(chars.slice(i, i + 256).join(''));
    await client.query(
      `INSERT INTO memories (agent_id, key, value, type, metadata, created_at, updated_at)
       SELECT $1, k, '', 'fact', '{}', now(), now() FROM unnest($2::text[]) AS k`,
      [agent, keys],
    );
    const { rows } = await client.query('SELECT key FROM memories WHERE agent_id = $1 ORDER BY key', [agent]);
    const byCodePoint = [...keys].sort((a, b) =>
      Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')),
    );
    expect(rows.length).toBe(keys.length);
    expect(rows.every((row, i) => row.key === byCodePoint[i])).toBe(true);
    expect(rows.map((r) => r.key).join('') === EVERY_CHAR.slice(1)).toBe(true);
    // A NUL is refused by text (the API refuses it in a key before it gets here).
    const nul = client.query(
      `INSERT INTO memories (agent_id, key, value, type, metadata, created_at, updated_at)
       VALUES ($1, $2, '', 'fact', '{}', now(), now())`,
      [agent, 'a\u0000b'],
    );
    expect(await failure(nul)).toMatchObject({ code: '22021' });
  });

  it('CHECK (balance_cents >= 0) refuses a negative balance, on insert and on update', async () => {
    expect(await failure(account(-1))).toMatchObject({
      code: '23514',
      constraint: 'accounts_balance_cents_check',
    });
    const agent = await account(5);
    expect(
      await failure(
        client.query('UPDATE accounts SET balance_cents = balance_cents - 6 WHERE id = $1', [agent]),
      ),
    ).toMatchObject({ code: '23514', constraint: 'accounts_balance_cents_check' });
    await client.query('UPDATE accounts SET balance_cents = balance_cents - 5 WHERE id = $1', [agent]);
    const { rows } = await client.query('SELECT balance_cents FROM accounts WHERE id = $1', [agent]);
    expect(rows[0].balance_cents).toBe('0'); // int8 arrives as a string
  });

  it('the ledger key (agent_id, seq) refuses a second entry with the same seq; a negative balance after is refused', async () => {
    const agent = await account(50);
    const entry = (id: string, seq: number, balanceAfter = 49) =>
      client.query(
        `INSERT INTO ledger (agent_id, seq, id, at, operation, amount_cents, balance_after_cents, cost_cents)
         VALUES ($1, $2, $3, now(), 'memory_store', -1, $4, 1)`,
        [agent, seq, id, balanceAfter],
      );
    await entry('e1', 1);
    // A lost update: a second writer that read the same ledger_seq writes the same seq, and fails loudly.
    expect(await failure(entry('e2', 1))).toMatchObject({ code: '23505', constraint: 'ledger_pkey' });
    await entry('e2', 2, 48);
    expect(await failure(entry('e2', 3, 47))).toMatchObject({ code: '23505', constraint: 'ledger_id_key' });
    expect(await failure(entry('e3', 3, -1))).toMatchObject({
      code: '23514',
      constraint: 'ledger_balance_after_cents_check',
    });
    // The same seq for another agent is its own sequence.
    const other = await account(50);
    await client.query(
      `INSERT INTO ledger (agent_id, seq, id, at, operation, amount_cents, balance_after_cents)
       VALUES ($1, 1, 'o1', now(), 'starter_credit', 50, 50)`,
      [other],
    );
  });

  it("update_seq orders an agent's memories by their last write, also within one millisecond", async () => {
    const agent = await account();
    const put = (key: string) =>
      client.query(
        `INSERT INTO memories (agent_id, key, value, type, metadata, created_at, updated_at)
         VALUES ($1, $2, '', 'fact', '{}', 'epoch', 'epoch')
         ON CONFLICT (agent_id, key) DO UPDATE SET value = EXCLUDED.value, update_seq = nextval('memories_update_seq')`,
        [agent, key],
      );
    for (const key of ['a', 'b', 'c', 'a']) await put(key);
    const { rows } = await client.query(
      'SELECT key FROM memories WHERE agent_id = $1 ORDER BY update_seq DESC',
      [agent],
    );
    expect(rows.map((r) => r.key)).toEqual(['a', 'c', 'b']);
  });
});
