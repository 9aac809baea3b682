/** What `setup <client>` prints: pasteable JSON in each client's documented shape, or a `claude mcp add` line. */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { CLIENT_NAMES, type ServerEntry, serverEntry } from '../../src/setup/client-configs.js';
import {
  claudeCodeArgs,
  claudeCodeCommand,
  portableEntry,
  portableSetupOutput,
  quoteArg,
  renderSetup,
} from '../../src/setup/setup-output.js';
import { SCHEMAS } from './client-schemas.js';

/**
 * `claude mcp add` as Claude Code's CLI declares it (`claude mcp add --help`: `-s, --scope`, `-t, --transport`,
 * `-e, --env <env...>`, then `<name> <commandOrUrl> [args...]`), parsed by commander as Claude Code's is: the
 * same variadic --env reproduces the "Invalid environment variable format: <name>" bug reports.
 */
function parseClaudeMcpAdd(words: string[]) {
  let parsed: { name: string; command: string; args: string[]; env?: string[]; scope?: string } | undefined;
  const program = new Command().exitOverride();
  program
    .command('add')
    .argument('<name>')
    .argument('<commandOrUrl>')
    .argument('[args...]')
    .option('-s, --scope <scope>')
    .option('-t, --transport <transport>')
    .option('-e, --env <env...>')
    .action((name: string, command: string, args: string[], options: { env?: string[]; scope?: string }) => {
      parsed = { name, command, args, env: options.env, scope: options.scope };
    });
  program.parse(words, { from: 'user' });
  return parsed;
}

describe('renderSetup', () => {
  const launch = { command: '/usr/bin/node', args: ['/opt/ac/dist/cli.js', 'mcp'] };

  it("prints a JSON document in each file-configured client's documented shape", () => {
    for (const client of CLIENT_NAMES.filter((c) => c !== 'claude-code')) {
      const text = renderSetup(client, 'agent-context', serverEntry(client, launch, 'linux'), 'linux');
      expect(text.endsWith('}\n')).toBe(true);
      const document = SCHEMAS[client].parse(JSON.parse(text));
      expect(Object.keys(document)).toEqual([client === 'vscode' ? 'servers' : 'mcpServers']);
    }
  });

  it('prints a `claude mcp add` line for Claude Code', () => {
    expect(
      renderSetup('claude-code', 'agent-context', serverEntry('claude-code', launch, 'linux'), 'linux'),
    ).toBe(
      'claude mcp add --transport stdio --scope user agent-context -- /usr/bin/node /opt/ac/dist/cli.js mcp\n',
    );
  });
});

describe('claudeCodeCommand', () => {
  const entry: ServerEntry = {
    type: 'stdio',
    command: '/usr/bin/node',
    args: ["/home/o'neil/my apps/agent-context/dist/cli.js", 'mcp'],
    env: { DATA_DIR: '/srv/agent context' },
  };

  it('quotes for a POSIX shell and for Windows shells', () => {
    expect(claudeCodeCommand('agent-context', entry, 'linux')).toBe(
      "claude mcp add --transport stdio --scope user --env 'DATA_DIR=/srv/agent context' -- agent-context " +
        `/usr/bin/node '/home/o'\\''neil/my apps/agent-context/dist/cli.js' mcp`,
    );
    const windows: ServerEntry = {
      type: 'stdio',
      command: 'C:\\Program Files\\nodejs\\node.exe',
      args: ['C:\\Users\\ada\\ac\\dist\\cli.js', 'mcp'],
      env: {},
    };
    expect(claudeCodeCommand('agent-context', windows, 'win32')).toBe(
      'claude mcp add --transport stdio --scope user agent-context -- "C:\\Program Files\\nodejs\\node.exe" ' +
        'C:\\Users\\ada\\ac\\dist\\cli.js mcp',
    );
    expect(quoteArg('plain-word_1.js', 'linux')).toBe('plain-word_1.js');
    expect(quoteArg('$HOME', 'linux')).toBe("'$HOME'");
  });

  it('parses back to the same server, with and without --env', () => {
    const envs: Record<string, string>[] = [{}, { DATA_DIR: '/srv/ac' }];
    for (const env of envs) {
      const words = claudeCodeArgs('agent-context', { ...entry, env }).slice(2); // after `claude mcp`
      expect(parseClaudeMcpAdd(words)).toEqual({
        name: 'agent-context',
        command: entry.command,
        args: entry.args,
        env: Object.keys(env).length === 0 ? undefined : ['DATA_DIR=/srv/ac'],
        scope: 'user',
      });
    }
  });

  it('avoids the documented-but-broken order where --env swallows the name', () => {
    const broken = [
      'add',
      '--scope',
      'user',
      '--env',
      'DATA_DIR=/srv/ac',
      'agent-context',
      '--',
      'node',
      'cli.js',
    ];
    expect(parseClaudeMcpAdd(broken)?.name).toBe('node');
  });
});

describe('portable output (setup --npx)', () => {
  it('is `npx -y agent-context mcp` in every shape, with no env', () => {
    expect(portableEntry('claude-desktop')).toEqual({ command: 'npx', args: ['-y', 'agent-context', 'mcp'] });
    expect(portableEntry('cursor')).toEqual({ command: 'npx', args: ['-y', 'agent-context', 'mcp'] });
    expect(portableEntry('vscode')).toEqual({
      type: 'stdio',
      command: 'npx',
      args: ['-y', 'agent-context', 'mcp'],
    });
    expect(portableEntry('claude-code')).toEqual({
      type: 'stdio',
      command: 'npx',
      args: ['-y', 'agent-context', 'mcp'],
      env: {},
    });
    expect(JSON.parse(portableSetupOutput('claude-desktop'))).toEqual({
      mcpServers: { 'agent-context': { command: 'npx', args: ['-y', 'agent-context', 'mcp'] } },
    });
    expect(portableSetupOutput('claude-code')).toBe(
      'claude mcp add --transport stdio --scope user agent-context -- npx -y agent-context mcp\n',
    );
    expect(portableSetupOutput('claude-code', { platform: 'win32' })).toBe(
      'claude mcp add --transport stdio --scope user agent-context -- cmd /c npx -y agent-context mcp\n',
    );
  });
});
