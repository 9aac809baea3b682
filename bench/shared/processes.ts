/**
 * Child processes for the benchmarks: spawned with their log in a file, ready when they say they listen (or
 * when a URL answers), stopped with SIGTERM (SIGKILL after a grace period), each registered for cleanup.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { createServer } from 'node:net';
import { ROOT } from './build.mjs';
import { defer } from './cleanup.js';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
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

/** A free loopback port (for a server that must be told its port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The line a server (agent-context or a ceiling) prints once it listens, with its URL. */
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

export function tail(text: string, lines = 20): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

export interface SpawnedWithLog {
  child: ChildProcess;
  /** Where the child's stderr goes (a file, so that a chatty log costs the benchmark process nothing). */
  logFile: string;
  /** Milliseconds from spawn until it was ready, and its base URL. */
  ready: Promise<{ ms: number; url: string }>;
  stop: () => Promise<number | null>;
}

/**
 * Spawns `node <args>` with stdout piped and stderr written to `logFile`. Ready at the first line of that file
 * matching LISTENING (its URL the line's), or, given `probeUrl`, once a GET of it answers 2xx (a server whose log
 * says nothing at start; its URL that one's origin). Rejects if the child exits first or after `timeoutMs`.
 */
export function spawnWithLog(opts: {
  name: string;
  args: string[];
  env: Record<string, string | undefined>;
  logFile: string;
  probeUrl?: string;
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

  const ready = new Promise<{ ms: number; url: string }>((resolve, reject) => {
    const probeUrl = opts.probeUrl;
    let text = '';
    let offset = 0;
    let settled = false;
    const buffer = Buffer.alloc(64 * 1024);
    const readLog = () => {
      for (;;) {
        const n = readSync(readFd, buffer, 0, buffer.length, offset);
        if (n <= 0) break;
        offset += n;
        text += buffer.subarray(0, n).toString('utf8');
      }
    };
    const finish = (err?: Error, url?: string) => {
      if (settled) return;
      settled = true;
      const ms = performance.now() - started;
      clearInterval(poll);
      clearTimeout(timer);
      child.off('exit', onExit);
      closeSync(readFd);
      if (err) reject(err);
      else resolve({ ms, url: url as string });
    };
    /** Whether the log says it listens (and then finishes). */
    const listening = (): boolean => {
      readLog();
      const url = text.match(LISTENING)?.[1];
      if (url !== undefined) finish(undefined, url);
      return url !== undefined;
    };
    let probing = false;
    const answers = async (url: string) => {
      if (probing) return;
      probing = true;
      try {
        if ((await fetch(url)).ok) finish(undefined, new URL(url).origin);
      } catch {
        // not listening yet
      } finally {
        probing = false;
      }
    };
    const poll =
      probeUrl === undefined ? setInterval(listening, 2) : setInterval(() => answers(probeUrl), 50);
    const timer = setTimeout(() => {
      readLog();
      finish(new Error(`${opts.name} was not ready after ${opts.timeoutMs ?? 60_000} ms:\n${tail(text)}`));
    }, opts.timeoutMs ?? 60_000);
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      if (probeUrl === undefined && listening()) return;
      readLog();
      finish(
        new Error(`${opts.name} exited (code ${code}, signal ${signal}) before it was ready:\n${tail(text)}`),
      );
    };
    child.once('exit', onExit);
  });
  ready.catch(() => undefined); // handled by the caller; avoid an unhandled rejection before it awaits
  return { child, logFile: opts.logFile, ready, stop: stopWithCode };
}
