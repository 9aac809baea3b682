/**
 * What `agent-context setup <client>` prints on stdout without --write: something the user can paste as
 * is. A JSON document for the clients configured by file, a `claude mcp add` command line for Claude Code.
 * Also the portable (--npx) output, so tests can hold the repository's mcp.json and README recipes to it.
 */
import {
  type ClientName,
  configDocument,
  DEFAULT_ENTRY_NAME,
  type ServerEntry,
  serverEntry,
} from './client-configs.js';
import { PORTABLE_LAUNCH } from './launch.js';

/** Quotes one argument for the user's shell: POSIX sh, or cmd.exe/PowerShell on Windows. */
export function quoteArg(arg: string, platform: NodeJS.Platform): string {
  if (platform === 'win32') {
    return /^[\w@%+=:,./\\-]+$/.test(arg) ? arg : `"${arg.replace(/"/g, '\\"')}"`;
  }
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * The `claude mcp add` command line for the entry, user scope. Without environment variables it is the
 * documented `claude mcp add [options] <name> -- <command> [args...]`. With them, the name goes after the
 * `--`: `--env` takes several values and swallows a name that follows it (anthropics/claude-code issues
 * #23365, #46121, #62332: "Invalid environment variable format: <name>"), and after `--` every word is
 * positional, so `<name> <command> [args...]` still parse as such.
 */
export function claudeCodeArgs(name: string, entry: ServerEntry): string[] {
  const words = ['claude', 'mcp', 'add', '--transport', 'stdio', '--scope', 'user'];
  const env = Object.entries(entry.env ?? {});
  if (env.length === 0) return [...words, name, '--', entry.command, ...entry.args];
  for (const [key, value] of env) words.push('--env', `${key}=${value}`);
  return [...words, '--', name, entry.command, ...entry.args];
}

/** The same, as one line for the user's shell. */
export function claudeCodeCommand(name: string, entry: ServerEntry, platform: NodeJS.Platform): string {
  return claudeCodeArgs(name, entry)
    .map((word) => quoteArg(word, platform))
    .join(' ');
}

/** The stdout text of `setup <client>` (without --write) for this entry. */
export function renderSetup(
  client: ClientName,
  name: string,
  entry: ServerEntry,
  platform: NodeJS.Platform,
): string {
  if (client === 'claude-code') return `${claudeCodeCommand(name, entry, platform)}\n`;
  return `${JSON.stringify(configDocument(client, name, entry), null, 2)}\n`;
}

/** The portable entry `setup <client> --npx` uses, in the client's shape. */
export function portableEntry(client: ClientName, platform: NodeJS.Platform = 'linux'): ServerEntry {
  return serverEntry(client, { ...PORTABLE_LAUNCH, args: [...PORTABLE_LAUNCH.args] }, platform);
}

/** Exactly what `setup <client> --npx` prints on stdout. */
export function portableSetupOutput(
  client: ClientName,
  options: { name?: string; platform?: NodeJS.Platform } = {},
): string {
  const platform = options.platform ?? 'linux';
  return renderSetup(client, options.name ?? DEFAULT_ENTRY_NAME, portableEntry(client, platform), platform);
}
