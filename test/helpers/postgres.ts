/**
 * A PostgreSQL database of its own for a test file, on the one cluster that the vitest run shares
 * (started by test/postgres-setup.ts and handed over with `provide('postgres', ...)`). A migrated database
 * is a copy of a template that has every migration applied (about 0.1 s); an empty one is a copy of
 * template0. Nothing needs dropping: the cluster is deleted at the end of the run.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { type ClusterAddress, createDatabase } from './postgres-cluster.js';

export interface ProvidedPostgres {
  address: ClusterAddress;
  /** A database with every migration of src/store/postgres/migrations applied, to copy. */
  template: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: ProvidedPostgres;
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  address: ClusterAddress;
}

let made = 0;

/** The shared cluster's address and template. */
export function sharedPostgres(): ProvidedPostgres {
  const provided = inject('postgres');
  if (provided === undefined) {
    throw new Error(
      'No PostgreSQL cluster was provided to this test: run it through vitest.config.ts, whose globalSetup ' +
        'test/postgres-setup.ts starts one.',
    );
  }
  return provided;
}

/**
 * Creates a database for the calling test file: migrated (the default) or empty (`migrated: false`, for
 * tests of the migrations themselves). `label` starts its name, to tell databases apart in the server log.
 */
export async function testDatabase(
  options: { migrated?: boolean; label?: string } = {},
): Promise<TestDatabase> {
  const { address, template } = sharedPostgres();
  const label = (options.label ?? 'test')
    .toLowerCase()
    .replace(/[^a-z0-9_]/gu, '_')
    .slice(0, 30);
  const name = `${label}_${process.pid}_${++made}_${randomBytes(3).toString('hex')}`;
  const url = await createDatabase(address, name, options.migrated === false ? 'template0' : template);
  return { name, url, address };
}
