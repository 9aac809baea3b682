/**
 * The MCP clients `agent-context setup` knows: where each keeps its user-level configuration file and the
 * shape of one stdio server entry in it. Pure functions of {platform, env, homedir}, so every platform's
 * paths can be checked on any machine, and nothing here reads process.env.
 *
 * Verified against the clients' documentation:
 * - Claude Desktop: modelcontextprotocol.io "Connect to local MCP servers"
 *   (modelcontextprotocol/modelcontextprotocol, docs/docs/develop/connect-local-servers.mdx): the file is
 *   `~/Library/Application Support/Claude/claude_desktop_config.json` on macOS and
 *   `%APPDATA%\Claude\claude_desktop_config.json` on Windows; `{"mcpServers": {name: {command, args, env}}}`.
 *   Claude Desktop has no official Linux build: `$XDG_CONFIG_HOME/Claude/` (default `~/.config`) is what the
 *   community builds use, not documented by Anthropic.
 * - Cursor: cursor.com/docs/mcp: `~/.cursor/mcp.json` for every project (`.cursor/mcp.json` per project);
 *   `{"mcpServers": {name: {command, args, env}}}`.
 * - VS Code: code.visualstudio.com/docs/copilot/reference/mcp-configuration: `mcp.json` in the user
 *   profile (command "MCP: Open User Configuration"), `{"servers": {name: {type: "stdio", command, args,
 *   env}}, "inputs": [...]}`, `type` required. The profile folder is VS Code's user-data directory + `User`,
 *   per microsoft/vscode src/vs/platform/environment/node/userDataPath.ts: `%APPDATA%` (else
 *   `%USERPROFILE%\AppData\Roaming`), `~/Library/Application Support`, `$XDG_CONFIG_HOME` (else `~/.config`),
 *   then `Code`. A named (non-default) profile keeps its own mcp.json elsewhere: use --config for it.
 * - Claude Code: code.claude.com/docs/en/mcp: `claude mcp add [options] <name> -- <command> [args...]`,
 *   options `--transport stdio`, `--scope user`, `--env KEY=value`; user-scope servers live in the top-level
 *   `mcpServers` of `~/.claude.json`, written by the CLI as `{type: "stdio", command, args, env}` (env `{}`
 *   when none). On native Windows the docs ask for `cmd /c` in front of `npx`.
 */
import path from 'node:path';

/** The entry name used unless --name says otherwise. */
export const DEFAULT_ENTRY_NAME = 'agent-context';

export const CLIENT_NAMES = ['claude-desktop', 'cursor', 'vscode', 'claude-code', 'generic'] as const;
export type ClientName = (typeof CLIENT_NAMES)[number];

export const CLIENT_TITLES: Record<ClientName, string> = {
  'claude-desktop': 'Claude Desktop',
  cursor: 'Cursor',
  vscode: 'VS Code',
  'claude-code': 'Claude Code',
  generic: 'your MCP client',
};

export function isClientName(value: string): value is ClientName {
  return (CLIENT_NAMES as readonly string[]).includes(value);
}

/** The facts about the machine that decide where configuration files live. */
export interface HostInfo {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  homedir: string;
}

/** How to start the server: a program, its arguments and extra environment variables. */
export interface Launch {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** One server entry as a client's configuration file holds it. */
export interface ServerEntry {
  type?: 'stdio';
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** The top-level key under which the client keeps its servers. */
export function containerKey(client: ClientName): 'servers' | 'mcpServers' {
  return client === 'vscode' ? 'servers' : 'mcpServers';
}

/** The entry for `launch` in the shape `client` documents (see the header for the sources). */
export function serverEntry(client: ClientName, launch: Launch, platform: NodeJS.Platform): ServerEntry {
  let { command, args } = launch;
  if (client === 'claude-code' && platform === 'win32' && command === 'npx') {
    [command, args] = ['cmd', ['/c', 'npx', ...args]];
  }
  const env = launch.env === undefined ? undefined : { ...launch.env };
  switch (client) {
    case 'vscode':
      return env === undefined ? { type: 'stdio', command, args } : { type: 'stdio', command, args, env };
    case 'claude-code':
      return { type: 'stdio', command, args, env: env ?? {} };
    default:
      return env === undefined ? { command, args } : { command, args, env };
  }
}

/** The smallest configuration document holding the entry: what is printed, and what a new file contains. */
export function configDocument(
  client: ClientName,
  name: string,
  entry: ServerEntry,
): Record<string, Record<string, ServerEntry>> {
  return { [containerKey(client)]: { [name]: entry } };
}

function pathsFor(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** The per-user application-data directory the Electron clients (Claude Desktop, VS Code) use. */
function appDataDir(host: HostInfo): string {
  const p = pathsFor(host.platform);
  if (host.platform === 'win32') return host.env.APPDATA || p.join(host.homedir, 'AppData', 'Roaming');
  if (host.platform === 'darwin') return p.join(host.homedir, 'Library', 'Application Support');
  const xdg = host.env.XDG_CONFIG_HOME;
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  return xdg && p.isAbsolute(xdg) ? xdg : p.join(host.homedir, '.config');
}

/** The client's standard user-level configuration file; undefined for `generic`, which has none. */
export function defaultConfigPath(client: ClientName, host: HostInfo): string | undefined {
  const p = pathsFor(host.platform);
  switch (client) {
    case 'claude-desktop':
      return p.join(appDataDir(host), 'Claude', 'claude_desktop_config.json');
    case 'cursor':
      return p.join(host.homedir, '.cursor', 'mcp.json');
    case 'vscode':
      return p.join(appDataDir(host), 'Code', 'User', 'mcp.json');
    case 'claude-code':
      return p.join(host.homedir, '.claude.json');
    case 'generic':
      return undefined;
  }
}
