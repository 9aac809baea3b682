/**
 * `agent-context serve` with DATABASE_URL, as an operator runs it: the built CLI on a fresh database (the
 * migrations applied at start), two instances on one database sharing accounts, memories, the ledger and
 * idempotency records, and the configuration error when DATA_DIR is set as well.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase } from '../../helpers/postgres.js';
import { runProcess } from '../../helpers/run-process.js';
import { CLI, type SpawnedServer, spawnServe } from '../../helpers/spawn-serve.js';

const started: SpawnedServer[] = [];
afterEach(async () => {
  for (const server of started.splice(0)) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
});

async function serveOn(url: string): Promise<SpawnedServer> {
  const server = await spawnServe({ DATABASE_URL: url, DATA_DIR: '', AC_LOG_LEVEL: 'info' });
  started.push(server);
  return server;
}

async function call(base: string, method: string, route: string, body?: unknown, headers = {}) {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

describe('serve on PostgreSQL', () => {
  it('migrates a fresh database at start, and two instances share one store', async () => {
    const db = await testDatabase({ migrated: false, label: 'serve_pg' });
    const first = await serveOn(db.url);
    expect(first.stderr()).toMatch(/store: postgresql:\/\/127\.0\.0\.1:\d+\/serve_pg/);
    expect(first.stderr()).not.toMatch(/password/);
    const second = await serveOn(db.url);
    // A shared database gets no local agent: the only account is the one registered below.

    const registered = await call(first.url, 'POST', '/api/ac/register', { email: 'pg@example.com' });
    expect(registered.status).toBe(200);
    const key = registered.body.agent_key as string;
    const auth = { 'x-api-key': key };

    // Written on the first instance, read and charged on the second.
    const stored = await call(
      first.url,
      'POST',
      '/api/ac/memory',
      { agent_key: key, memory_key: 'nul\u2028', memory_value: 'a\u0000b ✓', metadata: { k: '\u0000' } },
      auth,
    );
    expect(stored.status).toBe(200);
    const read = await call(
      second.url,
      'GET',
      `/api/ac/memory?agent_key=${encodeURIComponent(key)}&memory_key=${encodeURIComponent('nul\u2028')}`,
      undefined,
      auth,
    );
    expect(read.status).toBe(200);
    expect(read.body.memory).toMatchObject({ memory_value: 'a\u0000b ✓', metadata: { k: '\u0000' } });
    expect(read.body.credit_balance_cents).toBe(48);

    // An idempotency key used on one instance replays on the other, and charges once.
    const request = { agent_key: key, memory_key: 'once', memory_value: 'v' };
    const original = await call(first.url, 'POST', '/api/ac/memory', request, {
      ...auth,
      'idempotency-key': 'k-1',
    });
    const replay = await call(second.url, 'POST', '/api/ac/memory', request, {
      ...auth,
      'idempotency-key': 'k-1',
    });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(original.body);
    const ledger = await call(second.url, 'GET', '/api/ac/account/transactions', undefined, auth);
    expect(ledger.body.credit_balance_cents).toBe(47);
    expect(ledger.body.transactions.map((t: { operation: string }) => t.operation)).toEqual([
      'memory_store',
      'memory_retrieve',
      'memory_store',
      'starter_credit',
    ]);
    const balance = ledger.body.transactions.reduce(
      (sum: number, t: { amount_cents: number }) => sum + t.amount_cents,
      0,
    );
    expect(balance).toBe(47);
    const { Client } = (await import('pg')).default;
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT email, balance_cents FROM accounts');
      expect(rows).toEqual([{ email: 'pg@example.com', balance_cents: '47' }]);
    } finally {
      await client.end();
    }
  });

  it("serves on DATABASE_URL under npm start's --default-data-dir, which gives way to it", async () => {
    const db = await testDatabase({ label: 'serve_pg_default_dir' });
    const env = { ...process.env, DATABASE_URL: db.url } as Record<string, string>;
    delete env.DATA_DIR;
    const server = await spawnServe(env, CLI, ['--default-data-dir', '/nonexistent/checkout/data']);
    started.push(server);
    expect(server.stderr()).toMatch(/store: postgresql:\/\/127\.0\.0\.1:\d+\/serve_pg_default_dir/);
    const reg = await call(server.url, 'POST', '/api/ac/register', { email: 'start@example.com' });
    expect(reg.status).toBe(200);
  });

  it('refuses to start with both DATABASE_URL and DATA_DIR, saying which to drop', async () => {
    const db = await testDatabase({ label: 'serve_pg_conflict' });
    const run = await runProcess(process.execPath, [CLI, 'serve', '--port', '0'], {
      ...process.env,
      DATABASE_URL: db.url,
      DATA_DIR: '/tmp/somewhere',
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/DATABASE_URL and DATA_DIR are both set/);
    expect(run.stderr).toMatch(/Drop DATA_DIR to use PostgreSQL, or DATABASE_URL to use the files/);
  });
});
