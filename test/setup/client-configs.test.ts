/** Where each client's configuration lives on macOS, Windows and Linux, and which command starts the server. */
import { describe, expect, it } from 'vitest';
import {
  CLIENT_NAMES,
  configDocument,
  defaultConfigPath,
  type HostInfo,
  serverEntry,
} from '../../src/setup/client-configs.js';
import { chooseLaunch, isNpxCachePath } from '../../src/setup/launch.js';
import { SCHEMAS } from './client-schemas.js';

const mac: HostInfo = { platform: 'darwin', env: {}, homedir: '/Users/ada' };
const windows: HostInfo = {
  platform: 'win32',
  env: { APPDATA: 'C:\\Users\\ada\\AppData\\Roaming' },
  homedir: 'C:\\Users\\ada',
};
const linux: HostInfo = { platform: 'linux', env: {}, homedir: '/home/ada' };

describe('defaultConfigPath', () => {
  it('follows the documented locations on macOS', () => {
    expect(defaultConfigPath('claude-desktop', mac)).toBe(
      '/Users/ada/Library/Application Support/Claude/claude_desktop_config.json',
    );
    expect(defaultConfigPath('cursor', mac)).toBe('/Users/ada/.cursor/mcp.json');
    expect(defaultConfigPath('vscode', mac)).toBe(
      '/Users/ada/Library/Application Support/Code/User/mcp.json',
    );
    expect(defaultConfigPath('claude-code', mac)).toBe('/Users/ada/.claude.json');
    expect(defaultConfigPath('generic', mac)).toBeUndefined();
  });

  it('follows the documented locations on Windows, with %APPDATA% or its default', () => {
    expect(defaultConfigPath('claude-desktop', windows)).toBe(
      'C:\\Users\\ada\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    );
    expect(defaultConfigPath('cursor', windows)).toBe('C:\\Users\\ada\\.cursor\\mcp.json');
    expect(defaultConfigPath('vscode', windows)).toBe(
      'C:\\Users\\ada\\AppData\\Roaming\\Code\\User\\mcp.json',
    );
    expect(defaultConfigPath('claude-code', windows)).toBe('C:\\Users\\ada\\.claude.json');
    const noAppData = { ...windows, env: {} };
    expect(defaultConfigPath('claude-desktop', noAppData)).toBe(
      'C:\\Users\\ada\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    );
  });

  it('uses $XDG_CONFIG_HOME on Linux when it is absolute, ~/.config otherwise', () => {
    expect(defaultConfigPath('claude-desktop', linux)).toBe(
      '/home/ada/.config/Claude/claude_desktop_config.json',
    );
    expect(defaultConfigPath('vscode', linux)).toBe('/home/ada/.config/Code/User/mcp.json');
    expect(defaultConfigPath('cursor', linux)).toBe('/home/ada/.cursor/mcp.json');
    expect(defaultConfigPath('claude-code', linux)).toBe('/home/ada/.claude.json');
    const xdg = { ...linux, env: { XDG_CONFIG_HOME: '/srv/conf' } };
    expect(defaultConfigPath('claude-desktop', xdg)).toBe('/srv/conf/Claude/claude_desktop_config.json');
    expect(defaultConfigPath('vscode', xdg)).toBe('/srv/conf/Code/User/mcp.json');
    expect(defaultConfigPath('cursor', xdg)).toBe('/home/ada/.cursor/mcp.json');
    const relative = { ...linux, env: { XDG_CONFIG_HOME: 'conf' } };
    expect(defaultConfigPath('vscode', relative)).toBe('/home/ada/.config/Code/User/mcp.json');
  });
});

describe('isNpxCachePath', () => {
  it("recognises npx's cache on POSIX and Windows", () => {
    expect(isNpxCachePath('/home/ada/.npm/_npx/1f2e3d/node_modules/agent-context/dist/cli.js')).toBe(true);
    expect(
      isNpxCachePath(
        'C:\\Users\\ada\\AppData\\Local\\npm-cache\\_npx\\1f2e\\node_modules\\agent-context\\dist\\cli.js',
      ),
    ).toBe(true);
    expect(isNpxCachePath('/usr/lib/node_modules/agent-context/dist/cli.js')).toBe(false);
    expect(isNpxCachePath('/home/ada/my_npx/dist/cli.js')).toBe(false);
  });
});

describe('chooseLaunch', () => {
  const installed = { cliPath: '/usr/lib/node_modules/agent-context/dist/cli.js', nodePath: '/usr/bin/node' };

  it('runs this Node binary on this cli.js by default, with no env', () => {
    expect(chooseLaunch({ ...installed, npx: false })).toEqual({
      launch: { command: '/usr/bin/node', args: [installed.cliPath, 'mcp'] },
    });
  });

  it('uses the portable npx form when asked, or when running from the npx cache', () => {
    const portable = { command: 'npx', args: ['-y', 'agent-context', 'mcp'] };
    expect(chooseLaunch({ ...installed, npx: true })).toEqual({ launch: portable, portable: 'requested' });
    const cached = {
      ...installed,
      cliPath: '/home/ada/.npm/_npx/ab12/node_modules/agent-context/dist/cli.js',
    };
    expect(chooseLaunch({ ...cached, npx: false })).toEqual({ launch: portable, portable: 'npx-cache' });
  });

  it('adds DATA_DIR when a data directory is given', () => {
    expect(chooseLaunch({ ...installed, npx: false, dataDir: '/srv/ac' }).launch.env).toEqual({
      DATA_DIR: '/srv/ac',
    });
    expect(chooseLaunch({ ...installed, npx: true, dataDir: '/srv/ac' }).launch).toEqual({
      command: 'npx',
      args: ['-y', 'agent-context', 'mcp'],
      env: { DATA_DIR: '/srv/ac' },
    });
  });
});

describe('serverEntry', () => {
  const launch = { command: '/usr/bin/node', args: ['/opt/ac/dist/cli.js', 'mcp'] };

  it("builds every client's documented shape, with and without env", () => {
    for (const client of CLIENT_NAMES) {
      for (const env of [undefined, { DATA_DIR: '/srv/ac' }]) {
        const entry = serverEntry(client, env ? { ...launch, env } : launch, 'linux');
        expect(SCHEMAS[client].safeParse(configDocument(client, 'agent-context', entry)).success).toBe(true);
      }
    }
  });

  it('adds type "stdio" where the client documents it, and env {} as `claude mcp add` writes it', () => {
    expect(serverEntry('vscode', launch, 'linux')).toEqual({ type: 'stdio', ...launch });
    expect(serverEntry('claude-code', launch, 'linux')).toEqual({ type: 'stdio', ...launch, env: {} });
    expect(serverEntry('cursor', launch, 'linux')).toEqual(launch);
  });

  it('wraps npx in `cmd /c` for Claude Code on native Windows only', () => {
    const npx = { command: 'npx', args: ['-y', 'agent-context', 'mcp'] };
    expect(serverEntry('claude-code', npx, 'win32')).toEqual({
      type: 'stdio',
      command: 'cmd',
      args: ['/c', 'npx', '-y', 'agent-context', 'mcp'],
      env: {},
    });
    expect(serverEntry('claude-desktop', npx, 'win32')).toEqual(npx);
    expect(serverEntry('claude-code', npx, 'darwin').command).toBe('npx');
  });
});
