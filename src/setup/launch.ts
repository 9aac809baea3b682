/**
 * Which command starts this installation's MCP server. By default the exact Node binary and cli.js that
 * are running now, so the client needs nothing on its PATH; the portable `npx -y agent-context mcp` when
 * asked for, or when this copy runs from npx's cache, whose paths do not survive a cache clean.
 */
import type { Launch } from './client-configs.js';

export const PACKAGE_NAME = 'agent-context';

/** The form that works wherever Node and the npm registry are reachable (`setup --npx`). */
export const PORTABLE_LAUNCH: Readonly<Launch> = Object.freeze({
  command: 'npx',
  args: ['-y', PACKAGE_NAME, 'mcp'],
});

/** True when the path lies in npx's cache (`~/.npm/_npx/<hash>/…`, `%LOCALAPPDATA%\npm-cache\_npx\…`). */
export function isNpxCachePath(file: string): boolean {
  return /[\\/]_npx[\\/]/.test(file);
}

export interface LaunchOptions {
  /** Absolute path of the running dist/cli.js. */
  cliPath: string;
  /** Absolute path of the Node binary running it (process.execPath). */
  nodePath: string;
  /** --npx: force the portable form. */
  npx: boolean;
  /** --data-dir, already absolute: becomes DATA_DIR in the server's environment. */
  dataDir?: string;
}

export interface LaunchChoice {
  launch: Launch;
  /** Why the portable form was used, if it was. */
  portable?: 'requested' | 'npx-cache';
}

export function chooseLaunch(options: LaunchOptions): LaunchChoice {
  const env = options.dataDir === undefined ? {} : { env: { DATA_DIR: options.dataDir } };
  const portable = options.npx ? 'requested' : isNpxCachePath(options.cliPath) ? 'npx-cache' : undefined;
  if (portable === undefined) {
    return { launch: { command: options.nodePath, args: [options.cliPath, 'mcp'], ...env } };
  }
  return { launch: { command: PORTABLE_LAUNCH.command, args: [...PORTABLE_LAUNCH.args], ...env }, portable };
}
