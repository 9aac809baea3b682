/**
 * Opens the PostgreSQL store: connects, brings the schema up to date (migrate.ts, under its advisory lock,
 * so that instances starting together apply each migration once), and hands back the store. A database
 * that cannot be reached, or whose schema is newer than this version knows, stops the start with a
 * StoreOpenError that says what to do.
 */
import pg from 'pg';
import type { DatabaseConfig } from '../../config.js';
import { StoreOpenError } from '../store-open-error.js';
import { MigrationError, migrate } from './migrate.js';
import { PostgresStore } from './postgres-store.js';

/** The database's address for a log line: host, port and database, never the user's password. */
export function databaseLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `postgresql://${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`;
  } catch {
    return 'postgresql://(unparsable URL)';
  }
}

export async function openPostgresStore(
  database: Readonly<DatabaseConfig>,
): Promise<{ store: PostgresStore; where: string }> {
  const where = databaseLabel(database.url);
  const client = new pg.Client({ connectionString: database.url });
  try {
    await client.connect();
    await migrate(client);
  } catch (err) {
    if (err instanceof MigrationError) throw new StoreOpenError(`${where}: ${err.message}`);
    throw new StoreOpenError(
      `The database at ${where} could not be reached or set up (${(err as Error).message}). Check ` +
        'DATABASE_URL and that the server is running and accepts this user.',
    );
  } finally {
    await client.end().catch(() => undefined);
  }
  const store = new PostgresStore({
    connectionString: database.url,
    poolMax: database.poolMax,
    statementTimeoutMs: database.statementTimeoutMs,
  });
  return { store, where };
}
