/**
 * Schema migrations of the PostgreSQL store: plain SQL files in `./migrations`, named `NNNN_name.sql`
 * (a four-digit version, then lower-case words joined by `_`), applied in version order.
 *
 * Every instance runs `migrate` at start-up; whichever gets the lock first applies what is missing, the
 * others then find nothing to do. Each missing migration runs in a transaction of its own that first takes
 * a transaction-level advisory lock (`MIGRATION_LOCK_KEY`), then reads `schema_migrations` (made here if
 * absent), applies the file and records its version, name and SHA-256 checksum; a failure rolls that
 * migration back whole. Before anything is applied, what the database holds is checked against the files:
 * - an applied migration whose file changed since (another checksum) is refused, naming the version: an
 *   applied migration must never change, a change goes in a new file;
 * - a database with a version newer than any file is refused ("this instance is older than the schema;
 *   upgrade it"), and so is one with an applied version this instance has no file for, or a file older
 *   than the newest applied version that was never applied (a migration added out of order).
 *
 * A migration file holds no BEGIN or COMMIT (it already runs in a transaction) and nothing that cannot run
 * in one (CREATE INDEX CONCURRENTLY, ALTER TYPE ... ADD VALUE before PostgreSQL 12).
 *
 * The files ship in the npm package next to the built module: `npm run build` copies `src/**\/*.sql` into
 * `dist/` (scripts/copy-sql.mjs), and package.json's `files` lists `dist/**\/*.sql`.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClientBase } from 'pg';

/** Where this module's migrations are: `src/store/postgres/migrations`, or `dist/...` once built. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * The key of the advisory lock under which every migration runs: the first 8 bytes of
 * SHA-256("agent-context schema migrations") as a signed 64-bit integer. Fixed forever: instances of every
 * version must take the same lock.
 */
export const MIGRATION_LOCK_KEY = '4617422577568946331';

export interface Migration {
  version: number;
  /** The file name's words: `initial` for 0001_initial.sql. */
  name: string;
  file: string;
  sql: string;
  /** SHA-256 of the file's text, hex, with CRLF line ends read as LF (a checkout may convert them). */
  checksum: string;
}

export interface MigrateResult {
  /** The migrations this call applied, in order (none when another instance had applied them). */
  applied: Migration[];
  /** The schema version of the database afterwards. */
  version: number;
}

/** The database and the migration files disagree: the message names the version and what to do. */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

const FILE_NAME = /^(\d{4})_([a-z0-9]+(?:_[a-z0-9]+)*)\.sql$/u;

export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql.replace(/\r\n/gu, '\n'), 'utf8').digest('hex');
}

const label = (version: number, name?: string) =>
  `${String(version).padStart(4, '0')}${name === undefined ? '' : ` (${name})`}`;

/** The migrations in `dir`, in version order. A `.sql` file whose name does not follow the rule is an error. */
export async function loadMigrations(dir: string = MIGRATIONS_DIR): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort()) {
    const match = FILE_NAME.exec(file);
    if (!match) {
      throw new MigrationError(
        `The migration file ${path.join(dir, file)} is misnamed: a migration is named NNNN_name.sql ` +
          '(four digits, then lower-case words joined by _), e.g. 0002_add_index.sql.',
      );
    }
    const version = Number(match[1]);
    const previous = migrations.at(-1);
    if (version === 0 || previous?.version === version) {
      throw new MigrationError(
        `The migration file ${path.join(dir, file)} has version ${label(version)}, ` +
          (version === 0 ? 'which is reserved: versions start at 0001.' : `as ${previous?.file} has.`),
      );
    }
    const sql = await readFile(path.join(dir, file), 'utf8');
    migrations.push({ version, name: match[2] as string, file, sql, checksum: checksumOf(sql) });
  }
  return migrations;
}

interface AppliedRow {
  version: number;
  name: string;
  checksum: string;
}

/**
 * Throws when what the database has applied (in version order) does not fit `known`; returns the migrations
 * still to apply.
 */
function pending(applied: AppliedRow[], known: Migration[]): Migration[] {
  const byVersion = new Map(known.map((m) => [m.version, m]));
  const newestKnown = known.at(-1)?.version ?? 0;
  const newest = applied.at(-1);
  if (newest !== undefined && newest.version > newestKnown) {
    throw new MigrationError(
      `The database schema is at version ${label(newest.version, newest.name)}, newer than the newest ` +
        `migration this instance knows (${newestKnown === 0 ? 'none' : label(newestKnown)}): this instance ` +
        'is older than the schema; upgrade it.',
    );
  }
  for (const row of applied) {
    const file = byVersion.get(row.version);
    if (file === undefined) {
      throw new MigrationError(
        `The database has migration ${label(row.version, row.name)} applied, which this instance has no ` +
          'file for: it was built from another history of migrations. Run a version that has it.',
      );
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        `Migration ${label(row.version, row.name)} was applied to this database with checksum ` +
          `${row.checksum.slice(0, 12)}…, but its file ${file.file} now has ${file.checksum.slice(0, 12)}…: ` +
          'an applied migration must never change. Restore the file as it was released and make the change ' +
          'in a new migration.',
      );
    }
  }
  const done = new Set(applied.map((row) => row.version));
  const newestApplied = newest?.version ?? 0;
  const missing = known.filter((m) => !done.has(m.version));
  const late = missing.find((m) => m.version < newestApplied);
  if (late !== undefined) {
    throw new MigrationError(
      `Migration ${label(late.version, late.name)} was never applied, but the later ${label(newestApplied)} ` +
        'was: a migration was added out of order. Give it a version after the newest applied one.',
    );
  }
  return missing;
}

/**
 * Brings the database `client` is connected to up to the newest migration (see the module comment). The
 * client must be a single connection (not a pool) that is in no transaction; it is left in none.
 */
export async function migrate(
  client: ClientBase,
  options: { migrations?: Migration[]; directory?: string } = {},
): Promise<MigrateResult> {
  const known = options.migrations ?? (await loadMigrations(options.directory));
  const applied: Migration[] = [];
  for (;;) {
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL statement_timeout = 0');
      await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
      const { rows: exists } = await client.query<{ table: string | null }>(
        "SELECT to_regclass('schema_migrations')::text AS table",
      );
      if (exists[0]?.table == null) {
        await client.query(
          `CREATE TABLE schema_migrations (
             version    integer     PRIMARY KEY CHECK (version >= 1),
             name       text        NOT NULL,
             checksum   text        NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now()
           )`,
        );
      }
      const { rows } = await client.query<AppliedRow>(
        'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
      );
      const next = pending(rows, known)[0];
      if (next === undefined) {
        await client.query('COMMIT');
        return { applied, version: rows.at(-1)?.version ?? 0 };
      }
      try {
        await client.query(next.sql);
      } catch (err) {
        throw new MigrationError(
          `Migration ${label(next.version, next.name)} (${next.file}) failed, nothing of it was applied: ` +
            `${(err as Error).message}`,
          { cause: err },
        );
      }
      await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
        next.version,
        next.name,
        next.checksum,
      ]);
      await client.query('COMMIT');
      applied.push(next);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }
}
