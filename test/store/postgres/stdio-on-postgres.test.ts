/**
 * `agent-context mcp` on a shared PostgreSQL database, as a desktop client on a team's database runs it:
 * with AC_API_KEY it acts as that registered agent, on the same ledger a server of the database serves; it
 * makes no local agent there, so without AC_API_KEY (or with a key the database does not know) it still
 * connects and every call says what to set.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabase } from '../../helpers/postgres.js';
import { connectStdio, toolJson } from '../../helpers/stdio-client.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';

let url: string;
let label: string;
let server: TestServer;

beforeAll(async () => {
  const db = await testDatabase({ label: 'stdio_pg' });
  url = db.url;
  label = `postgresql://${db.address.host}:${db.address.port}/${db.name}`;
  server = await startTestServer({ env: { DATABASE_URL: url, DATA_DIR: '' } });
});
afterAll(() => server.close());

async function accountCount(): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query('SELECT count(*) AS n FROM accounts')).rows[0].n);
  } finally {
    await client.end();
  }
}

/** Environment for the stdio server on the test database (no DATA_DIR: the two cannot be set together). */
function onDatabase(extra: Record<string, string> = {}): Record<string, string> {
  return { DATABASE_URL: url, AC_LOG_LEVEL: 'info', ...extra };
}

async function unavailableBody(env: Record<string, string>): Promise<any> {
  const { client, exited, stderr } = await connectStdio(env);
  expect((await client.listTools()).tools.map((t) => t.name)).toContain('memory_store');
  const result = await client.callTool({
    name: 'memory_store',
    arguments: { memory_key: 'a', memory_value: 'b' },
  });
  expect(result.isError).toBe(true);
  const body = toolJson(result);
  expect(body.code).toBe('unavailable');
  await client.close();
  expect(await exited).toBe(0);
  expect(stderr()).not.toMatch(/\n\s+at .+:\d+:\d+/);
  return body;
}

describe('agent-context mcp on PostgreSQL', () => {
  it('with AC_API_KEY acts as that agent, on the ledger a server of the database shows', async () => {
    const key = await server.register('stdio-pg@example.com');
    const { client, exited, stderr } = await connectStdio(onDatabase({ AC_API_KEY: key }));
    const stored = await client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'from-stdio', memory_value: 'v\u0000' },
    });
    expect(stored.isError).toBeFalsy();
    const info = await client.callTool({ name: 'account_info', arguments: {} });
    expect(info.structuredContent).toMatchObject({ email: 'stdio-pg@example.com', credit_balance_cents: 49 });
    await client.close();
    expect(await exited).toBe(0);
    expect(stderr()).toContain(`the database at ${label}`);
    expect(stderr()).not.toMatch(/password/i);

    const read = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'from-stdio' },
    });
    expect(read.body).toMatchObject({ memory: { memory_value: 'v\u0000' }, credit_balance_cents: 48 });
  });

  it('without AC_API_KEY makes no local agent on a shared database, and says to set the key', async () => {
    const before = await accountCount();
    const body = await unavailableBody(onDatabase());
    expect(body.error).toContain(`AC_API_KEY is not set, and the database at ${label} is shared`);
    expect(body.error).toContain('register one with POST /api/ac/register');
    expect(await accountCount()).toBe(before);
  });

  it('with a key the database does not know, says so and names the database', async () => {
    const body = await unavailableBody(onDatabase({ AC_API_KEY: 'ac_not-a-key-of-this-database' }));
    expect(body.error).toContain(`AC_API_KEY is not a key of the database at ${label}`);
  });

  it('with DATA_DIR set as well, names the conflict', async () => {
    const body = await unavailableBody(onDatabase({ DATA_DIR: '/tmp/somewhere' }));
    expect(body.error).toContain('DATABASE_URL and DATA_DIR are both set');
  });
});
