/** Runs the built `agent-context serve` as a child process, as users run it, and waits for its URL. */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

export const CLI = path.resolve('dist/cli.js');

export interface SpawnedServer {
  child: ChildProcess;
  url: string;
  stderr(): string;
  exited: Promise<number | null>;
}

/**
 * Starts `serve` on a free port: the repository's build, or another `cli` (an installed package's), with the
 * program's `options` before the command (as `npm start` passes `--default-data-dir data`).
 */
export function spawnServe(
  env: Record<string, string>,
  cli = CLI,
  options: string[] = [],
): Promise<SpawnedServer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...options, 'serve', '--port', '0'], {
      env: { ...process.env, AC_RATE_LIMIT: 'off', ...env },
    });
    let stderr = '';
    let listening = false;
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.stderr.on('data', (d) => {
      stderr += d;
      // Once the URL is known, only collect: rescanning all of a busy server's log on each chunk is quadratic.
      if (listening) return;
      const match = /listening on (http:\/\/[^"\s]+)/.exec(stderr);
      if (match) {
        listening = true;
        resolve({ child, url: match[1] as string, stderr: () => stderr, exited });
      }
    });
    exited.then((code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
}
