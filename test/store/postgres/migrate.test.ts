/**
 * The migrator (src/store/postgres/migrate.ts) on real PostgreSQL: migrations apply exactly once when
 * instances race, a second run changes nothing, and a database that does not fit the files (an applied file
 * changed, a newer schema, a migration added out of order) is refused with a message naming the version.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { MemoryQuery } from '../../../src/core/store-reader.js';
import {
  checksumOf,
  loadMigrations,
  MIGRATIONS_DIR,
  MigrationError,
  migrate,
} from '../../../src/store/postgres/migrate.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { backfillSearch } from '../../../src/store/postgres/search-backfill.js';
import { testDatabase } from '../../helpers/postgres.js';

const clients: pg.Client[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(clients.map((client) => client.end()));
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

/** A directory of migration files: name → SQL. */
async function migrationsDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ac-migrations-'));
  dirs.push(dir);
  await writeFiles(dir, files);
  return dir;
}

async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, sql] of Object.entries(files)) await writeFile(path.join(dir, name), sql);
}

async function appliedRows(client: pg.Client) {
  const { rows } = await client.query(
    'SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version',
  );
  return rows as { version: number; name: string; checksum: string; applied_at: Date }[];
}

async function tableExists(client: pg.Client, table: string): Promise<boolean> {
  const { rows } = await client.query('SELECT to_regclass($1) IS NOT NULL AS found', [table]);
  return rows[0].found;
}

describe('the migration files', () => {
  it('are src/store/postgres/migrations/NNNN_name.sql, numbered from 0001 without a gap', async () => {
    expect(MIGRATIONS_DIR).toBe(
      path.join(process.cwd(), 'src', 'store', 'postgres', 'migrations') + path.sep,
    );
    const known = await loadMigrations();
    expect(known[0]).toMatchObject({ version: 1, name: 'initial', file: '0001_initial.sql' });
    expect(known.map((m) => m.version)).toEqual(known.map((_, i) => i + 1));
    for (const m of known) expect(m.checksum).toBe(checksumOf(m.sql));
  });

  it('0002 gives every memory stored before it version 1, and the store reads it', async () => {
    const db = await testDatabase({ migrated: false, label: 'versions' });
    const client = await connect(db.url);
    const [initial] = await loadMigrations();
    await migrate(client, {
      directory: await migrationsDir({ [initial?.file as string]: initial?.sql as string }),
    });
    await client.query(
      "INSERT INTO accounts (id, email, key_hash, plan, balance_cents, created_at) VALUES ('a', 'a@example.com', 'h', 'pay-as-you-go', 0, now())",
    );
    await client.query(
      "INSERT INTO memories (agent_id, key, value, type, metadata, created_at, updated_at) VALUES ('a', 'old', 'x', 'fact', '{}', now(), now())",
    );
    await migrate(client);
    const { rows } = await client.query("SELECT version FROM memories WHERE key = 'old'");
    expect(rows).toEqual([{ version: 1 }]);
    await expect(client.query("UPDATE memories SET version = 0 WHERE key = 'old'")).rejects.toThrow(/check/);
  });

  it('0005 indexes the metadata of memories stored before it, and the start-up backfill their search terms', async () => {
    const db = await testDatabase({ migrated: false, label: 'search' });
    const client = await connect(db.url);
    const before = (await loadMigrations()).filter((m) => m.version < 5);
    await migrate(client, {
      directory: await migrationsDir(Object.fromEntries(before.map((m) => [m.file, m.sql]))),
    });
    await client.query(
      "INSERT INTO accounts (id, email, key_hash, plan, balance_cents, created_at) VALUES ('a', 'a@example.com', 'h', 'pay-as-you-go', 0, now())",
    );
    for (const [key, value, metadata] of [
      ['pref.editor.theme', 'Dark themes, launched\u0000later', '{"project": "apollo", "nul": "a\\u0000b"}'],
      ['other', 'nothing here', '{}'],
    ]) {
      await client.query(
        "INSERT INTO memories (agent_id, key, value, type, metadata, created_at, updated_at) VALUES ('a', $1, convert_to($2, 'UTF8'), 'fact', $3, now(), now())",
        [key, (value as string).replace('\u0000', ' '), metadata],
      );
    }
    await migrate(client);
    expect(await backfillSearch(client)).toBe(2);
    expect(await backfillSearch(client)).toBe(0);
    const store = new PostgresStore({ connectionString: db.url });
    try {
      const query = (q: Partial<MemoryQuery>) =>
        store.read((r) => r.queryMemories('a', { liveAt: new Date().toISOString(), limit: 10, ...q }));
      const keys = async (q: Partial<MemoryQuery>) => (await query(q)).hits.map((h) => h.memory.key);
      expect(await keys({ text: 'editor launching' })).toEqual(['pref.editor.theme']);
      expect(await keys({ text: 'apollo' })).toEqual(['pref.editor.theme']);
      expect(await keys({ metadata: { project: 'apollo' } })).toEqual(['pref.editor.theme']);
      expect(await keys({ metadata: { nul: 'a\u0000b' } })).toEqual(['pref.editor.theme']);
    } finally {
      await store.close();
    }
  });

  it('a misnamed .sql file is an error, not skipped', async () => {
    const dir = await migrationsDir({ '0001_a.sql': 'SELECT 1;', '2_b.sql': 'SELECT 2;' });
    await expect(loadMigrations(dir)).rejects.toThrow(
      /2_b\.sql is misnamed: a migration is named NNNN_name\.sql/,
    );
  });
});

describe('migrate', () => {
  it('three migrators racing on one fresh database apply the schema exactly once', async () => {
    const db = await testDatabase({ migrated: false, label: 'race' });
    const known = await loadMigrations();
    const racers = await Promise.all([1, 2, 3].map(() => connect(db.url)));
    const results = await Promise.all(racers.map((client) => migrate(client)));

    const applied = results.flatMap((r) => r.applied.map((m) => m.version)).sort((a, b) => a - b);
    expect(applied).toEqual(known.map((m) => m.version));
    for (const result of results) expect(result.version).toBe(known.at(-1)?.version);
    const rows = await appliedRows(racers[0] as pg.Client);
    expect(rows.map(({ version, name, checksum }) => ({ version, name, checksum }))).toEqual(
      known.map(({ version, name, checksum }) => ({ version, name, checksum })),
    );

    // The tables of the schema, the caches and counters UNLOGGED (emptied after a crash), the rest logged.
    const { rows: tables } = await (racers[0] as pg.Client).query(
      "SELECT relname, relpersistence FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY relname",
    );
    expect(Object.fromEntries(tables.map((t) => [t.relname, t.relpersistence]))).toEqual({
      accounts: 'p',
      idempotency: 'p',
      ledger: 'p',
      memory_history: 'p',
      live_cache: 'u',
      live_flights: 'u',
      live_usage: 'p',
      memories: 'p',
      oauth_records: 'p',
      rate_limits: 'u',
      schema_migrations: 'p',
    });
  });

  it('racing on several migrations: each runs once, in order, under the lock', async () => {
    const db = await testDatabase({ migrated: false, label: 'race_many' });
    const files: Record<string, string> = {
      '0001_runs.sql':
        'CREATE TABLE runs (version int PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp());',
    };
    for (let v = 2; v <= 5; v++) {
      files[`000${v}_step_${v}.sql`] =
        `SELECT pg_sleep(0.02); CREATE TABLE step_${v} (x int); INSERT INTO runs (version) VALUES (${v});`;
    }
    const directory = await migrationsDir(files);
    const racers = await Promise.all([1, 2, 3].map(() => connect(db.url)));
    const results = await Promise.all(racers.map((client) => migrate(client, { directory })));

    expect(results.flatMap((r) => r.applied.map((m) => m.version)).sort()).toEqual([1, 2, 3, 4, 5]);
    const { rows } = await (racers[0] as pg.Client).query('SELECT version FROM runs ORDER BY at');
    expect(rows.map((r) => r.version)).toEqual([2, 3, 4, 5]);
  });

  it('a second run is a no-op', async () => {
    const db = await testDatabase({ label: 'again' }); // a copy of the migrated template
    const client = await connect(db.url);
    const before = await appliedRows(client);
    expect(before.length).toBeGreaterThan(0);
    const result = await migrate(client);
    expect(result).toEqual({ applied: [], version: before.at(-1)?.version });
    expect(await appliedRows(client)).toEqual(before);
    // And the client is left in no transaction.
    const { rows } = await client.query('SELECT now() = statement_timestamp() AS outside');
    expect(rows[0].outside).toBe(true);
  });

  it('refuses a database whose applied migration has another checksum than its file, applying nothing', async () => {
    const db = await testDatabase({ migrated: false, label: 'checksum' });
    const client = await connect(db.url);
    const directory = await migrationsDir({ '0001_first.sql': 'CREATE TABLE first (x int);\n' });
    await migrate(client, { directory });

    // The same text with CRLF line ends (a Windows checkout) is the same migration.
    await writeFiles(directory, { '0001_first.sql': 'CREATE TABLE first (x int);\r\n' });
    expect(await migrate(client, { directory })).toEqual({ applied: [], version: 1 });

    await writeFiles(directory, {
      '0001_first.sql': 'CREATE TABLE first (x bigint);\n',
      '0002_second.sql': 'CREATE TABLE second (x int);\n',
    });
    const refused = migrate(client, { directory });
    await expect(refused).rejects.toThrow(MigrationError);
    await expect(refused).rejects.toThrow(
      /^Migration 0001 \(first\) was applied to this database with checksum [0-9a-f]{12}…, but its file 0001_first\.sql now has [0-9a-f]{12}…: an applied migration must never change/,
    );
    expect(await tableExists(client, 'second')).toBe(false);
    expect((await appliedRows(client)).map((r) => r.version)).toEqual([1]);
  });

  it('refuses a schema newer than the instance: "this instance is older than the schema; upgrade it"', async () => {
    const db = await testDatabase({ migrated: false, label: 'newer' });
    const client = await connect(db.url);
    const newer = await migrationsDir({
      '0001_first.sql': 'CREATE TABLE first (x int);',
      '0002_second.sql': 'CREATE TABLE second (x int);',
    });
    await migrate(client, { directory: newer });
    const older = await migrationsDir({ '0001_first.sql': 'CREATE TABLE first (x int);' });
    await expect(migrate(client, { directory: older })).rejects.toThrow(
      'The database schema is at version 0002 (second), newer than the newest migration this instance ' +
        'knows (0001): this instance is older than the schema; upgrade it.',
    );
    // And an instance of the real schema, against a database of another history that is newer still.
    await migrate(client, {
      directory: await migrationsDir({
        '0001_first.sql': 'CREATE TABLE first (x int);',
        '0002_second.sql': 'CREATE TABLE second (x int);',
        '9999_far.sql': 'SELECT 1;',
      }),
    });
    await expect(migrate(client)).rejects.toThrow(
      /version 9999 \(far\).*this instance is older than the schema/,
    );
  });

  it('refuses a migration added below the newest applied one', async () => {
    const db = await testDatabase({ migrated: false, label: 'order' });
    const client = await connect(db.url);
    const directory = await migrationsDir({ '0001_a.sql': 'SELECT 1;', '0003_c.sql': 'SELECT 3;' });
    await migrate(client, { directory });
    await writeFiles(directory, { '0002_b.sql': 'CREATE TABLE b (x int);' });
    await expect(migrate(client, { directory })).rejects.toThrow(
      /Migration 0002 \(b\) was never applied, but the later 0003 was: a migration was added out of order/,
    );
    expect(await tableExists(client, 'b')).toBe(false);
  });

  it('a failing migration is rolled back whole and named; the ones before it stay', async () => {
    const db = await testDatabase({ migrated: false, label: 'failing' });
    const client = await connect(db.url);
    const directory = await migrationsDir({
      '0001_good.sql': 'CREATE TABLE good (x int);',
      '0002_bad.sql': 'CREATE TABLE half (x int);\nSELECT 1 / 0;',
    });
    await expect(migrate(client, { directory })).rejects.toThrow(
      'Migration 0002 (bad) (0002_bad.sql) failed, nothing of it was applied: division by zero',
    );
    expect(await tableExists(client, 'good')).toBe(true);
    expect(await tableExists(client, 'half')).toBe(false);
    expect((await appliedRows(client)).map((r) => r.version)).toEqual([1]);
    // Fixed (it was never applied, so it may still change), it applies.
    await writeFiles(directory, { '0002_bad.sql': 'CREATE TABLE half (x int);' });
    expect((await migrate(client, { directory })).applied.map((m) => m.version)).toEqual([2]);
  });
});
