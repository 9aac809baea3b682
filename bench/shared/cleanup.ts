/**
 * Everything a benchmark starts or makes is registered here and torn down in reverse order, on success, on
 * failure and on Ctrl-C: the cleanup registry, temp dirs, and the way each benchmark's main runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

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

/** A fresh temp dir (`ac-bench-<prefix>-…`), removed at cleanup or by `remove`. */
export async function makeTempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), `ac-bench-${prefix}-`));
  const remove = defer(`temp dir ${dir}`, () => rm(dir, { recursive: true, force: true }));
  return { dir, remove };
}

/** On SIGINT or SIGTERM: says so through `report`, runs every cleanup, and exits 130. */
export function cleanupOnSignals(report: (message: string) => void): void {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      report(`${signal}: cleaning up`);
      cleanupAll().finally(() => process.exit(130));
    });
  }
}

/** Runs a benchmark's `main`: a failure printed as `<name> failed: <stack>` (exit code 1), every cleanup run. */
export async function runMain(name: string, main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (err) {
    process.stderr.write(`${name} failed: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 1;
  } finally {
    await cleanupAll();
  }
}
