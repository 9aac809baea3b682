/**
 * One PostgreSQL cluster for the whole vitest run (test/helpers/postgres-cluster.ts), with a template
 * database that has every migration applied, handed to test files by `provide('postgres', ...)`; a test
 * file takes a database of its own from it with `testDatabase()` (test/helpers/postgres.ts). Stopped and
 * deleted by the teardown; if this process dies first, the cluster's watchdog does it.
 */
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate } from '../src/store/postgres/migrate.js';
import type { ProvidedPostgres } from './helpers/postgres.js'; // declares provide('postgres', ...)
import { PostgresCluster, withAdminClient } from './helpers/postgres-cluster.js';

const TEMPLATE = 'ac_migrated_template';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await PostgresCluster.start();
  try {
    await cluster.createDatabase(TEMPLATE);
    const client = new pg.Client({ connectionString: cluster.url(TEMPLATE) });
    await client.connect();
    try {
      await migrate(client);
    } finally {
      await client.end();
    }
    // A template cannot be copied while anyone is connected to it: let nobody connect.
    await withAdminClient(cluster.address, (admin) =>
      admin.query(`ALTER DATABASE ${TEMPLATE} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`),
    );
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  const provided: ProvidedPostgres = { address: cluster.address, template: TEMPLATE };
  project.provide('postgres', provided);
  return () => cluster.stop();
}
