/**
 * The statement channel of the PostgreSQL store (src/store/postgres/statement-channel.ts, issue 32): single
 * statements on pipelined connections, the statements of one turn in one write per connection, each its own
 * transaction; one agent's statements on one connection; connections opened only when the open ones are busy;
 * a connection the database ended replaced at the next statement.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUnreachable } from '../../../src/store/postgres/postgres-errors.js';
import { StatementChannel } from '../../../src/store/postgres/statement-channel.js';
import { type TestDatabase, testDatabase } from '../../helpers/postgres.js';
import { TcpRelay } from '../../helpers/tcp-relay.js';

let database: TestDatabase;
let relay: TcpRelay;
let sent = 0;
let relayedUrl: string;
const channels: StatementChannel[] = [];

const channel = (size: number, url = relayedUrl) => {
  const made = new StatementChannel({
    connectionString: url,
    size,
    statementTimeoutMs: 5000,
    connectTimeoutMs: 5000,
  });
  channels.push(made);
  return made;
};
const backend = async (c: StatementChannel, affinity?: string) =>
  Number(
    (await c.query('SELECT pg_backend_pid() AS pid', [], affinity === undefined ? {} : { affinity })).rows[0]
      .pid,
  );

beforeAll(async () => {
  database = await testDatabase({ label: 'channel' });
  relay = await TcpRelay.to(database.address, {
    onClientData: () => {
      sent++;
    },
  });
  const url = new URL(database.url);
  url.port = String(relay.port);
  relayedUrl = url.toString();
});
afterAll(async () => {
  await Promise.all(channels.map((c) => c.close()));
  await relay.cut();
});

describe('the statement channel', () => {
  it('sends the statements of one turn in one write, each answered on its own', async () => {
    const c = channel(1);
    await c.query('SELECT 1');
    const before = sent;
    const answers = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => c.query('SELECT 10 / $1::integer AS n', [i % 10 === 5 ? 0 : 1])),
    );
    expect(sent - before).toBe(1);
    // A statement that fails fails alone: each has its own Sync, so its own implicit transaction.
    expect(answers.filter((a) => a.status === 'rejected')).toHaveLength(3);
    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(27);
  });

  it("keeps one affinity's statements on one connection, and spreads others over the connections", async () => {
    const c = channel(4);
    const one = await Promise.all(Array.from({ length: 12 }, () => backend(c, 'agent-1')));
    expect(new Set(one).size).toBe(1);
    const many = await Promise.all(Array.from({ length: 40 }, (_, i) => backend(c, `agent-${i}`)));
    expect(new Set(many).size).toBeGreaterThan(1);
    expect(new Set(many).size).toBeLessThanOrEqual(4);
  });

  it('opens a connection only when the open ones are busy', async () => {
    const c = channel(4);
    for (let i = 0; i < 10; i++) await c.query('SELECT 1');
    expect(c.stats().open).toBe(1);
    await Promise.all(Array.from({ length: 8 }, () => c.query('SELECT pg_sleep(0.01)')));
    expect(c.stats().open).toBeGreaterThan(1);
  });

  it('replaces a connection the database ended, at the next statement', async () => {
    const c = channel(1, database.url);
    const pid = await backend(c);
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await admin.end();
    // The statement sent on the ended connection fails as "out of reach", or the channel saw the end first.
    const next = await backend(c).catch((err: unknown) => {
      expect(isUnreachable(err)).toBe(true);
      return backend(c);
    });
    expect(next).not.toBe(pid);
    expect(await backend(c)).toBe(next);
  });

  it('refuses statements once closed', async () => {
    const c = channel(1);
    await c.query('SELECT 1');
    await c.close();
    await expect(c.query('SELECT 1')).rejects.toThrow(/closed/u);
  });
});
