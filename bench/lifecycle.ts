/**
 * Child processes, temp dirs and their cleanup for the benchmark: everything started is registered here and
 * torn down in reverse order, on success, on failure and on Ctrl-C.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..');

type Cleanup = { name: string; run: () => Promise<void> };
const cleanups: Cleanup[] = [];

/** Registers a cleanup; returns a function that runs it now (once) and unregisters it. */
export function defer(name: string, run: () => Promise<void>): () => Promise<void> {
  const entry: Cleanup = { name, run };
  cleanups.push(entry);
  let done: Promise<void> | undefined;
  return () => {
    done ??= (async () => {
      const at = cleanups.indexOf(entry);
      if (at >= 0) cleanups.splice(at, 1);
      await run();
    })();
    return done;
  };
}

/** Runs every registered cleanup, newest first; reports failures and carries on. */
export async function cleanupAll(): Promise<void> {
  while (cleanups.length > 0) {
    const entry = cleanups.pop() as Cleanup;
    try {
      await entry.run();
    } catch (err) {
      process.stderr.write(`bench: cleanup of ${entry.name} failed: ${(err as Error).message}\n`);
    }
  }
}

export async function makeTempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), `ac-bench-${prefix}-`));
  const remove = defer(`temp dir ${dir}`, () => rm(dir, { recursive: true, force: true }));
  return { dir, remove };
}

export function isAlive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Signals a child and waits for it to exit; SIGKILL after `graceMs`. Resolves with its exit code. */
export async function stopChild(child: ChildProcess, graceMs = 30_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), graceMs);
  });
  const first = await Promise.race([exited, timedOut]);
  clearTimeout(timer);
  if (first !== 'timeout') return first;
  process.stderr.write(`bench: pid ${child.pid} did not exit ${graceMs} ms after SIGTERM; sending SIGKILL\n`);
  child.kill('SIGKILL');
  return exited;
}

/** Kills a process we started by pid (for children spawned by a library), if it is still there. */
export async function killPid(pid: number | undefined, graceMs = 5_000): Promise<void> {
  if (!isAlive(pid)) return;
  process.kill(pid as number, 'SIGTERM');
  const until = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < until) await sleep(20);
  if (isAlive(pid)) process.kill(pid as number, 'SIGKILL');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface SpawnedWithLog {
  child: ChildProcess;
  /** Where the child's stderr goes (a file, so that a chatty log costs the benchmark process nothing). */
  logFile: string;
  /** Milliseconds from spawn to the first stderr line matching the pattern, and that match. */
  ready: Promise<{ ms: number; match: RegExpMatchArray }>;
  stop: () => Promise<number | null>;
}

/**
 * Spawns a process with stdout piped and stderr written to `logFile`, and watches that file for a line
 * matching `readyPattern`. Rejects if the child exits first or after `timeoutMs`.
 */
export function spawnWithLog(opts: {
  name: string;
  args: string[];
  env: Record<string, string | undefined>;
  logFile: string;
  readyPattern: RegExp;
  timeoutMs?: number;
  stopGraceMs?: number;
}): SpawnedWithLog {
  const fd = openSync(opts.logFile, 'w');
  const readFd = openSync(opts.logFile, 'r');
  const started = performance.now();
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, opts.args, {
      cwd: ROOT,
      env: opts.env,
      stdio: ['ignore', 'pipe', fd],
    });
  } finally {
    closeSync(fd);
  }
  child.stdout?.resume();
  const stop = defer(`${opts.name} (pid ${child.pid})`, () =>
    stopChild(child, opts.stopGraceMs).then(() => {}),
  );
  let exitCode: number | null = null;
  const stopWithCode = async () => {
    await stop();
    return exitCode ?? child.exitCode;
  };
  child.once('exit', (code) => {
    exitCode = code;
  });

  const ready = new Promise<{ ms: number; match: RegExpMatchArray }>((resolve, reject) => {
    let text = '';
    let offset = 0;
    const buffer = Buffer.alloc(64 * 1024);
    const finish = (err?: Error, result?: { ms: number; match: RegExpMatchArray }) => {
      clearInterval(poll);
      clearTimeout(timer);
      child.off('exit', onExit);
      closeSync(readFd);
      if (err) reject(err);
      else resolve(result as { ms: number; match: RegExpMatchArray });
    };
    const check = (): boolean => {
      for (;;) {
        const n = readSync(readFd, buffer, 0, buffer.length, offset);
        if (n <= 0) break;
        offset += n;
        text += buffer.subarray(0, n).toString('utf8');
      }
      const match = text.match(opts.readyPattern);
      if (match) {
        finish(undefined, { ms: performance.now() - started, match });
        return true;
      }
      return false;
    };
    const poll = setInterval(check, 2);
    const timer = setTimeout(
      () =>
        finish(new Error(`${opts.name} was not ready after ${opts.timeoutMs ?? 60_000} ms:\n${tail(text)}`)),
      opts.timeoutMs ?? 60_000,
    );
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      if (check()) return;
      finish(
        new Error(`${opts.name} exited (code ${code}, signal ${signal}) before it was ready:\n${tail(text)}`),
      );
    };
    child.once('exit', onExit);
  });
  ready.catch(() => undefined); // handled by the caller; avoid an unhandled rejection before it awaits
  return { child, logFile: opts.logFile, ready, stop: stopWithCode };
}

export function tail(text: string, lines = 20): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** VmRSS and VmHWM (peak) of a live process, in MiB, from /proc (Linux). */
export async function residentMemory(pid: number): Promise<{ rssMb: number; peakMb: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1]);
    return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Lines of a server log (pino JSON) at level error or fatal, and the first of them. */
export async function errorLogLines(file: string): Promise<{ count: number; first?: string }> {
  const text = await readFile(file, 'utf8').catch(() => '');
  let count = 0;
  let first: string | undefined;
  for (const line of text.split('\n')) {
    if (/"level":(50|60)\b/.test(line)) {
      count++;
      first ??= line.slice(0, 400);
    }
  }
  return { count, ...(first === undefined ? {} : { first }) };
}

/** The line a server (agent-context or the bare app) prints once it listens, with its URL. */
export const LISTENING = /listening on (http:\/\/[^\s"]+)/;

/** The few variables a child needs from this environment, and `extra`: nothing else leaks in. */
export function minimalEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

/** Where a bench server keeps its data: a JSON file store's DATA_DIR, or a PostgreSQL database. */
export type BenchServerStore =
  | { dataDir: string; databaseUrl?: never }
  | { databaseUrl: string; dataDir?: never };

/**
 * The built `agent-context serve` on `dataDir` or `databaseUrl` (then with no DATA_DIR: the service refuses
 * both), as the benchmark runs it: production mode, on a free loopback port, rate limits off (50
 * connections from one address would be answered 429), weather from the fake Open-Meteo at `upstreamUrl`.
 * `instances` sets AC_INSTANCES (how many instances share the upstreams' rates). `nodeArgs` go before the
 * script (`--cpu-prof` for the profile).
 */
export function spawnBenchServer(
  opts: BenchServerStore & {
    name: string;
    upstreamUrl: string;
    logFile: string;
    logLevel: string;
    instances?: number;
    nodeArgs?: string[];
  },
): SpawnedWithLog {
  const store: Record<string, string> =
    opts.databaseUrl !== undefined ? { DATABASE_URL: opts.databaseUrl } : { DATA_DIR: opts.dataDir };
  return spawnWithLog({
    name: opts.name,
    args: [...(opts.nodeArgs ?? []), path.join(ROOT, 'dist', 'cli.js'), 'serve'],
    env: minimalEnv({
      ...store,
      PORT: '0',
      HOST: '127.0.0.1',
      AC_LOG_LEVEL: opts.logLevel,
      NODE_ENV: 'production',
      AC_RATE_LIMIT: 'off',
      AC_WEATHER_PROVIDERS: 'open-meteo',
      AC_OPEN_METEO_GEOCODING_URL: opts.upstreamUrl,
      AC_OPEN_METEO_FORECAST_URL: opts.upstreamUrl,
      ...(opts.instances === undefined ? {} : { AC_INSTANCES: String(opts.instances) }),
    }),
    logFile: opts.logFile,
    readyPattern: LISTENING,
    timeoutMs: 120_000,
    stopGraceMs: 120_000,
  });
}
