/**
 * `agent-context setup <client>` end to end through commander, with a temporary HOME and captured writers:
 * what it prints, what it writes where, and how it refuses.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CommanderError } from 'commander';
import { parse } from 'jsonc-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLIENT_NAMES, type ClientName } from '../../src/setup/client-configs.js';
import { type SetupContext, setupCommand } from '../../src/setup/setup-command.js';
import { portableSetupOutput } from '../../src/setup/setup-output.js';
import { SCHEMAS } from './client-schemas.js';

let home: string;
let output: { stdout: string; stderr: string };

const CLI = '/opt/agent-context/dist/cli.js';
const NODE = '/opt/node/bin/node';

function context(overrides: Partial<SetupContext> = {}): SetupContext {
  return {
    platform: 'linux',
    env: {},
    homedir: home,
    cliPath: CLI,
    nodePath: NODE,
    cwd: home,
    now: () => new Date('2026-05-01T10:20:30.000Z'),
    stdout: (text) => {
      output.stdout += text;
    },
    stderr: (text) => {
      output.stderr += text;
    },
    ...overrides,
  };
}

/** Runs `setup ...args`; resolves to the exit code (0, or the code commander would exit with). */
async function setup(args: string[], overrides: Partial<SetupContext> = {}): Promise<number> {
  output = { stdout: '', stderr: '' };
  try {
    await setupCommand(context(overrides)).exitOverride().parseAsync(args, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    throw err;
  }
}

/** The client's servers in a document, after checking the document against the client's documented shape. */
function serversIn(client: ClientName, text: string): Record<string, unknown> {
  const document = SCHEMAS[client].parse(parse(text, [], { allowTrailingComma: true }));
  return (
    (document as Record<string, Record<string, unknown>>)[client === 'vscode' ? 'servers' : 'mcpServers'] ??
    {}
  );
}

const FILES: Record<Exclude<ClientName, 'generic'>, string> = {
  'claude-desktop': '.config/Claude/claude_desktop_config.json',
  cursor: '.cursor/mcp.json',
  vscode: '.config/Code/User/mcp.json',
  'claude-code': '.claude.json',
};

beforeEach(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'ac-setup-home-'));
});
afterEach(() => rm(home, { recursive: true, force: true }));

describe('setup <client> (printing)', () => {
  it("prints each file client's entry in its documented shape, and where it goes on stderr", async () => {
    for (const client of CLIENT_NAMES.filter((c) => c !== 'claude-code')) {
      expect(await setup([client])).toBe(0);
      const servers = serversIn(client, output.stdout);
      expect(servers['agent-context']).toMatchObject({ command: NODE, args: [CLI, 'mcp'] });
      expect(servers['agent-context']).not.toHaveProperty('env');
      if (client !== 'generic') expect(output.stderr).toContain(path.join(home, FILES[client]));
    }
    expect(await readdir(home)).toEqual([]);
  });

  it('prints the `claude mcp add` line for Claude Code, with --env for --data-dir', async () => {
    expect(await setup(['claude-code'])).toBe(0);
    expect(output.stdout).toBe(
      `claude mcp add --transport stdio --scope user agent-context -- ${NODE} ${CLI} mcp\n`,
    );
    expect(output.stderr).toContain(path.join(home, '.claude.json'));
    await setup(['claude-code', '--data-dir', 'my data']);
    expect(output.stdout).toBe(
      `claude mcp add --transport stdio --scope user --env 'DATA_DIR=${home}/my data' -- agent-context ` +
        `${NODE} ${CLI} mcp\n`,
    );
  });

  it('adds an absolute DATA_DIR and honours --name', async () => {
    await setup(['cursor', '--data-dir', 'store', '--name', 'memory-ac']);
    expect(JSON.parse(output.stdout)).toEqual({
      mcpServers: {
        'memory-ac': { command: NODE, args: [CLI, 'mcp'], env: { DATA_DIR: path.join(home, 'store') } },
      },
    });
  });

  it('prints the portable form with --npx, and by itself when running from the npx cache', async () => {
    for (const client of CLIENT_NAMES) {
      await setup([client, '--npx']);
      expect(output.stdout).toBe(portableSetupOutput(client));
    }
    const cached = '/home/ada/.npm/_npx/9f8e/node_modules/agent-context/dist/cli.js';
    await setup(['vscode'], { cliPath: cached });
    expect(output.stdout).toBe(portableSetupOutput('vscode'));
    expect(output.stderr).toContain("npx's cache");
  });

  it('uses the platform locations (macOS, Windows) it is given', async () => {
    await setup(['claude-desktop'], { platform: 'darwin', homedir: '/Users/ada' });
    expect(output.stderr).toContain(
      '/Users/ada/Library/Application Support/Claude/claude_desktop_config.json',
    );
    await setup(['vscode'], {
      platform: 'win32',
      homedir: 'C:\\Users\\ada',
      env: { APPDATA: 'C:\\Users\\ada\\AppData\\Roaming' },
    });
    expect(output.stderr).toContain('C:\\Users\\ada\\AppData\\Roaming\\Code\\User\\mcp.json');
  });
});

describe('setup <client> --write', () => {
  it("creates each client's file at its standard place, valid for its documented shape", async () => {
    for (const client of ['claude-desktop', 'cursor', 'vscode', 'claude-code'] as const) {
      expect(await setup([client, '--write', '--data-dir', '/srv/ac'])).toBe(0);
      const file = path.join(home, FILES[client]);
      expect(output.stdout).toBe(`Created ${file} with the "agent-context" server. ${restart(client)}\n`);
      const servers = serversIn(client, await readFile(file, 'utf8'));
      expect(servers['agent-context']).toMatchObject({
        command: NODE,
        args: [CLI, 'mcp'],
        env: { DATA_DIR: '/srv/ac' },
      });

      expect(await setup([client, '--write', '--data-dir', '/srv/ac'])).toBe(0);
      expect(output.stdout).toBe(
        `The "agent-context" server in ${file} is already up to date; nothing was written.\n`,
      );
    }
  });

  it("merges into VS Code's JSONC file: comments, trailing commas, other servers and keys stay as they were", async () => {
    const file = path.join(home, FILES.vscode);
    const before = `{
  // Servers for every workspace
  "servers": {
    "memory": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory",], // trailing comma
    },
  },
  "inputs": [
    { "type": "promptString", "id": "key", "description": "API key", "password": true },
  ],
}
`;
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, before);
    expect(await setup(['vscode', '--write'])).toBe(0);
    const backup = `${file}.backup-2026-05-01T102030.000Z`;
    expect(output.stdout).toBe(
      `Added the "agent-context" server to ${file} (previous file saved as ${backup}). Restart VS Code to load it.\n`,
    );
    expect(await readFile(backup, 'utf8')).toBe(before);

    const after = await readFile(file, 'utf8');
    const entry = { type: 'stdio', command: NODE, args: [CLI, 'mcp'] };
    const inserted = `\n    "agent-context": ${JSON.stringify(entry, null, 2).split('\n').join('\n    ')},`;
    const at = before.indexOf('    },\n  },') + '    },'.length;
    expect(after).toBe(before.slice(0, at) + inserted + before.slice(at));
    expect(Object.keys(serversIn('vscode', after))).toEqual(['memory', 'agent-context']);

    expect(await setup(['vscode', '--write'])).toBe(0);
    expect(output.stdout).toContain('already up to date');
    expect((await readdir(path.dirname(file))).sort()).toEqual(['mcp.json', path.basename(backup)]);
  });

  it("merges into Claude Code's ~/.claude.json at the top level, keeping its other state", async () => {
    const file = path.join(home, '.claude.json');
    const before = `${JSON.stringify({ numStartups: 3, projects: { '/w': { mcpServers: {} } } }, null, 2)}\n`;
    await writeFile(file, before);
    expect(await setup(['claude-code', '--write'])).toBe(0);
    const document = SCHEMAS['claude-code'].parse(JSON.parse(await readFile(file, 'utf8')));
    expect(document.mcpServers['agent-context']).toEqual({
      type: 'stdio',
      command: NODE,
      args: [CLI, 'mcp'],
      env: {},
    });
    expect(document).toMatchObject({ numStartups: 3, projects: { '/w': { mcpServers: {} } } });
  });

  it('writes where --config says, and needs it for a generic client', async () => {
    expect(await setup(['generic', '--write'])).toBe(1);
    expect(output.stderr).toBe(
      'agent-context setup: --write for a generic client needs --config <file>: there is no standard file to merge into.\n',
    );
    expect(await setup(['generic', '--write', '--config', 'clients/any.json'])).toBe(0);
    const file = path.join(home, 'clients', 'any.json');
    expect(
      SCHEMAS.generic.parse(JSON.parse(await readFile(file, 'utf8'))).mcpServers['agent-context'],
    ).toBeDefined();
    expect(await setup(['cursor', '--write', '--config', file])).toBe(0);
    expect(output.stdout).toContain('already up to date');
  });

  it('refuses a broken file with one line naming it, and leaves it alone', async () => {
    const file = path.join(home, FILES.cursor);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{ "mcpServers": { "a": 1 }');
    expect(await setup(['cursor', '--write'])).toBe(1);
    expect(output.stderr).toMatch(
      new RegExp(`^agent-context setup: ${file} is not valid JSON \\(.+\\)\\..*\\n$`),
    );
    expect(output.stderr.split('\n')).toHaveLength(2);
    expect(await readFile(file, 'utf8')).toBe('{ "mcpServers": { "a": 1 }');
    expect(await readdir(path.dirname(file))).toEqual(['mcp.json']);
  });
});

describe('setup errors', () => {
  it('names the valid clients on one line for an unknown one, exit code 1, no stack', async () => {
    expect(await setup(['claude'])).toBe(1);
    expect(output.stderr).toBe(
      'agent-context setup: unknown client "claude"; use one of: claude-desktop, cursor, vscode, claude-code, generic.\n',
    );
    expect(output.stdout).toBe('');
  });
});

function restart(client: ClientName): string {
  const titles = {
    'claude-desktop': 'Claude Desktop',
    cursor: 'Cursor',
    vscode: 'VS Code',
    'claude-code': 'Claude Code',
  };
  return `Restart ${titles[client as keyof typeof titles]} to load it.`;
}
