/**
 * src/store/postgres/schema.sql, the generated schema as it stands after the last migration, is what the
 * migrations make: a fresh database migrated by migrate() and read by scripts/schema-text.ts (what `npm run
 * schema` writes) gives the committed file byte for byte. And the reading renders what the migrations do not
 * use yet (enums, domains, views, triggers, identity columns, comments) and refuses what it cannot render.
 * Runs in every vitest run: the database comes from the run's shared PostgreSQL cluster, whatever the store.
 */
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SCHEMA_COMMAND, SCHEMA_FILE, schemaText } from '../../scripts/schema-text.js';
import { migrate } from '../../src/store/postgres/migrate.js';
import { testDatabase } from '../helpers/postgres.js';

const clients: pg.Client[] = [];

async function connect(label: string): Promise<pg.Client> {
  const { url } = await testDatabase({ migrated: false, label });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

afterAll(async () => {
  await Promise.all(clients.map((client) => client.end()));
});

describe('src/store/postgres/schema.sql', () => {
  it('is the schema that the migrations make, byte for byte', async () => {
    const client = await connect('schema_file');
    await migrate(client);
    const generated = Buffer.from(await schemaText(client), 'utf8');
    const committed = await readFile(SCHEMA_FILE);
    // The text's diff when they differ; the bytes' comparison settles it.
    expect(
      committed.toString('utf8'),
      `src/store/postgres/schema.sql is not the schema the migrations make: run \`${SCHEMA_COMMAND}\` and ` +
        'commit the file (never edit it by hand: change the schema in a new migration)',
    ).toBe(generated.toString('utf8'));
    expect(committed.equals(generated)).toBe(true);
  });
});

describe('the schema text', () => {
  it('renders enums, domains, views, triggers, identity columns, storage parameters and comments', async () => {
    const client = await connect('schema_text');
    await migrate(client, { migrations: [] });
    await client.query(`
      CREATE TYPE mood AS ENUM ('calm', 'it''s fine');
      CREATE DOMAIN cents AS bigint DEFAULT 0 NOT NULL CONSTRAINT cents_positive CHECK (VALUE >= 0);
      CREATE TABLE "Things" (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        "select" text COLLATE "C" NOT NULL DEFAULT 'x',
        how mood,
        price cents
      ) WITH (fillfactor = 70, autovacuum_enabled = false);
      CREATE INDEX things_how ON "Things" (how) WITH (fillfactor = 80) WHERE how IS NOT NULL;
      CREATE VIEW calm_things AS SELECT id FROM "Things" WHERE how = 'calm';
      CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
      CREATE TRIGGER things_touch BEFORE UPDATE ON "Things" FOR EACH ROW EXECUTE FUNCTION touch();
      COMMENT ON TABLE "Things" IS 'Things, it''s said.';
      COMMENT ON COLUMN "Things"."select" IS 'A reserved word.';
      COMMENT ON FUNCTION touch() IS 'Touches.';
    `);
    const text = await schemaText(client);
    for (const expected of [
      "CREATE TYPE public.mood AS ENUM (\n  'calm',\n  'it''s fine'\n);",
      'CREATE DOMAIN public.cents AS bigint\n  DEFAULT 0\n  NOT NULL\n  CONSTRAINT cents_positive CHECK ((VALUE >= 0));',
      'CREATE TABLE public."Things" (\n  id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,\n' +
        `  "select" text COLLATE pg_catalog."C" DEFAULT 'x'::text NOT NULL,\n  how public.mood,\n` +
        '  price public.cents,\n  CONSTRAINT "Things_pkey" PRIMARY KEY (id)\n) WITH (autovacuum_enabled=false, fillfactor=70);',
      `COMMENT ON TABLE public."Things" IS 'Things, it''s said.';`,
      `COMMENT ON COLUMN public."Things"."select" IS 'A reserved word.';`,
      'CREATE INDEX things_how ON public."Things" USING btree (how) WITH (fillfactor=\'80\') WHERE (how IS NOT NULL);',
      '-- Made by the constraint "Things_pkey" of public."Things":',
      'CREATE VIEW public.calm_things AS\n SELECT "Things".id',
      "COMMENT ON FUNCTION public.touch() IS 'Touches.';",
      'CREATE TRIGGER things_touch BEFORE UPDATE ON public."Things" FOR EACH ROW EXECUTE FUNCTION public.touch();',
    ]) {
      expect(text).toContain(expected);
    }
    // An identity column's sequence is the column's, not one of its own.
    expect(text).toContain('-- Sequences\n\n-- (none)');
    // The order does not depend on the order of creation: types, sequences, tables, views, indexes, functions, triggers.
    const sections = [...text.matchAll(/^-- (\w+)$/gmu)].map((m) => m[1]);
    expect(sections).toEqual(['Types', 'Sequences', 'Tables', 'Views', 'Indexes', 'Functions', 'Triggers']);
    expect(text.indexOf('public.cents AS')).toBeLessThan(text.indexOf('public.mood AS'));
    // The session is left as it was: no transaction, its own search_path.
    const { rows } = await client.query('SHOW search_path');
    expect(rows[0].search_path).toBe('"$user", public');
    await client.query('BEGIN');
    await client.query('ROLLBACK');
  });

  it('refuses what it does not render, naming it, rather than leave it out', async () => {
    const client = await connect('schema_text_refusal');
    await migrate(client, { migrations: [] });
    await client.query(`
      CREATE TABLE secrets (owner text);
      ALTER TABLE secrets ENABLE ROW LEVEL SECURITY;
      CREATE POLICY mine ON secrets USING (owner = current_user);
      CREATE SCHEMA elsewhere;
    `);
    await expect(schemaText(client)).rejects.toThrow(
      /does not render: policy mine; row level security on public\.secrets; schema elsewhere\. Teach it/u,
    );
    // The reading's transaction was rolled back.
    await client.query('SELECT 1');
  });
});
