/**
 * The MCP Bundle (`npm run bundle`, scripts/bundle.mjs) as Claude Desktop installs it. Built once for this file
 * from the dist/ the global set-up built, into a temporary directory, and unpacked there with mcpb's own
 * `unpackExtension` (the code Claude Desktop loads bundles with): it holds what npm publishes, the locked
 * production dependencies and nothing a devDependency brought; its manifest passes mcpb's validator and says
 * what package.json says. Started as Claude Desktop starts it (mcpb's `getMcpConfigForManifest` turns the
 * manifest and the settings form into the command, arguments and environment; `node` is the Node running the
 * tests, as it is Claude Desktop's own there) and driven with the SDK client: its tools and prompt are the
 * manifest's, memory_store then memory_retrieve work, and the local agent is on the unlimited plan, in the data
 * directory of the form or, with the form left empty, in the user data directory.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  getMcpConfigForManifest,
  type McpbManifestAny,
  unpackExtension,
  validateManifest,
} from '@anthropic-ai/mcpb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOCAL_AGENT_FILE } from '../../src/store/json/json-file-store.js';
import { connectStdio, type StdioConnection } from '../helpers/stdio-client.js';

const run = promisify(execFile);
const REPO = process.cwd();
const STACK_TRACE = /\n\s+at .+:\d+:\d+/;
/** `${name}`: a placeholder of mcpb's manifest, substituted by the client. */
const placeholder = (name: string) => `\${${name}}`;

/** The manifest as this bundle writes it: version 0.3, with `icons`. */
type Manifest = McpbManifestAny & { icons?: { src: string; size: string; theme?: string }[] };

/** Where env-paths puts the user data directory on Linux when XDG_DATA_HOME is unset. */
const storeIn = (home: string) => path.join(home, '.local', 'share', 'agent-context');

/** A PNG's width and height, from its IHDR chunk; undefined when it is not a PNG. */
function pngSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (!bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return undefined;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/** Every installed package under `dir`'s node_modules, nested ones too, as lockfile paths (`node_modules/a/node_modules/b`). */
async function installedPackages(dir: string, prefix = ''): Promise<string[]> {
  const modules = path.join(dir, 'node_modules');
  if (!existsSync(modules)) return [];
  const found: string[] = [];
  for (const entry of await readdir(modules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const names = entry.name.startsWith('@')
      ? (await readdir(path.join(modules, entry.name))).map((name) => `${entry.name}/${name}`)
      : [entry.name];
    for (const name of names) {
      const lockPath = `${prefix}node_modules/${name}`;
      found.push(lockPath);
      found.push(...(await installedPackages(path.join(modules, name), `${lockPath}/`)));
    }
  }
  return found;
}

/** Connects the SDK client to the server `config` describes, runs `work`, and always closes it. */
async function withServer<T>(
  config: { command: string; args?: string[]; env?: Record<string, string> } | undefined,
  home: string,
  work: (connection: StdioConnection) => Promise<T>,
): Promise<{ result: T; code: number | null; stderr: string }> {
  if (!config) throw new Error('getMcpConfigForManifest gave no configuration: a required option is missing');
  // Claude Desktop runs `node` with the Node it ships; here, the Node running the tests.
  expect(config.command).toBe('node');
  const connection = await connectStdio(
    { HOME: home, ...config.env },
    { command: process.execPath, args: config.args ?? [], cwd: path.parse(REPO).root },
  );
  let result: T;
  try {
    result = await work(connection);
  } finally {
    await connection.client.close();
  }
  return { result, code: await connection.exited, stderr: connection.stderr() };
}

describe('the MCP Bundle, unpacked and started as Claude Desktop does', () => {
  let root: string;
  let unpacked: string;
  let manifest: Manifest;
  let pkg: any;
  let lock: any;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ac-bundle-'));
    const bundle = path.join(root, 'agent-context.mcpb');
    await run(
      process.execPath,
      ['scripts/bundle.mjs', '--skip-build', '--out', bundle, '--staging', path.join(root, 'staging')],
      { cwd: REPO, maxBuffer: 64 * 1024 * 1024 },
    );
    unpacked = path.join(root, 'unpacked');
    expect(await unpackExtension({ mcpbPath: bundle, outputDir: unpacked, silent: true })).toBe(true);
    manifest = JSON.parse(await readFile(path.join(unpacked, 'manifest.json'), 'utf8'));
    pkg = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8'));
    lock = JSON.parse(await readFile(path.join(REPO, 'package-lock.json'), 'utf8'));
  }, 240_000);
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("holds the published files, the manifest, the icons and node_modules; package.json's files leave the bundle out", async () => {
    expect((await readdir(unpacked)).sort()).toEqual(
      [
        'LICENSE',
        'README.md',
        'dist',
        'docs',
        'icon.png',
        'icons',
        'manifest.json',
        'mcp.json',
        'node_modules',
        'package.json',
        'server.json',
      ].sort(),
    );
    expect(existsSync(path.join(unpacked, manifest.server.entry_point))).toBe(true);
    expect(manifest.server.entry_point).toBe(pkg.bin['agent-context']);
    // What npm publishes names dist/, docs/ and top-level files only: never agent-context.mcpb or build/.
    for (const pattern of pkg.files) expect(pattern).toMatch(/^(dist|docs)\/|^[\w-]+\.(md|json)$/);
  });

  it('ships the locked production dependencies and nothing only a devDependency needs', async () => {
    const installed = await installedPackages(unpacked);
    const devOnly = installed.filter((p) => lock.packages[p]?.dev || lock.packages[p]?.devOptional);
    const unlocked = installed.filter((p) => !lock.packages[p]);
    expect(devOnly).toEqual([]);
    expect(unlocked).toEqual([]);
    // The manifest says darwin, win32 and linux: nothing installed is for one platform only.
    const native = installed.filter((p) => lock.packages[p]?.os || lock.packages[p]?.cpu);
    expect(native).toEqual([]);
    for (const name of ['vitest', 'typescript', '@biomejs/biome', '@anthropic-ai/mcpb', 'esbuild', 'tsx'])
      expect(installed, name).not.toContain(`node_modules/${name}`);
    for (const name of Object.keys(pkg.devDependencies))
      if (lock.packages[`node_modules/${name}`]?.dev)
        expect(installed, name).not.toContain(`node_modules/${name}`);
    // Every production dependency, at its locked version.
    for (const name of Object.keys(pkg.dependencies)) {
      const installedPkg = JSON.parse(
        await readFile(path.join(unpacked, 'node_modules', name, 'package.json'), 'utf8'),
      );
      expect([name, installedPkg.version]).toEqual([name, lock.packages[`node_modules/${name}`].version]);
    }
    // The bundle's package.json is the published one.
    expect(JSON.parse(await readFile(path.join(unpacked, 'package.json'), 'utf8'))).toEqual(pkg);
  });

  it("passes mcpb's validator and says what package.json says", async () => {
    const said: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...args) => {
      said.push(args.join(' '));
    });
    let valid: boolean;
    try {
      valid = validateManifest(path.join(unpacked, 'manifest.json'));
    } finally {
      log.mockRestore();
    }
    expect(valid, said.join('\n')).toBe(true);
    expect(manifest).toMatchObject({
      name: pkg.name,
      version: pkg.version,
      description: pkg.description,
      license: pkg.license,
      repository: { type: 'git', url: pkg.repository.url.replace(/^git\+/, '') },
      server: {
        type: 'node',
        entry_point: 'dist/cli.js',
        mcp_config: {
          command: 'node',
          args: [`${placeholder('__dirname')}/dist/cli.js`, 'mcp'],
          env: {
            DATA_DIR: placeholder('user_config.data_dir'),
            AC_API_KEY: placeholder('user_config.api_key'),
          },
        },
      },
      compatibility: { platforms: ['darwin', 'win32', 'linux'], runtimes: { node: pkg.engines.node } },
      user_config: {
        data_dir: { type: 'directory', required: false, default: '' },
        api_key: { type: 'string', sensitive: true, required: false, default: '' },
      },
    });
    // The icon and each sized icon are PNGs of their stated size.
    expect(pngSize(await readFile(path.join(unpacked, manifest.icon as string)))).toEqual({
      width: 512,
      height: 512,
    });
    expect(manifest.icons?.length).toBeGreaterThan(1);
    for (const icon of manifest.icons ?? []) {
      const [width, height] = icon.size.split('x').map(Number);
      expect([icon.src, pngSize(await readFile(path.join(unpacked, icon.src)))]).toEqual([
        icon.src,
        { width, height },
      ]);
    }
  });

  it('with a data directory in the form: the manifest tools and prompt, store then retrieve, the unlimited plan', async () => {
    const home = path.join(root, 'home-form');
    const dataDir = path.join(root, 'data-form');
    await mkdir(home);
    const config = await getMcpConfigForManifest({
      manifest,
      extensionPath: unpacked,
      systemDirs: { HOME: home },
      userConfig: { data_dir: dataDir },
      pathSeparator: path.sep,
    });
    expect(config).toEqual({
      command: 'node',
      args: [`${unpacked}/dist/cli.js`, 'mcp'],
      env: { DATA_DIR: dataDir, AC_API_KEY: '' },
    });
    const { result, code, stderr } = await withServer(config, home, async ({ client }) => ({
      tools: (await client.listTools()).tools,
      prompts: (await client.listPrompts()).prompts,
      recall: await client.getPrompt({ name: 'recall', arguments: { topic: 'the garden' } }),
      stored: await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'bundle.first', memory_value: 'from the bundle' },
      }),
      got: await client.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'bundle.first' } }),
      info: await client.callTool({ name: 'account_info', arguments: {} }),
    }));
    expect(result.tools.map((t) => ({ name: t.name, description: t.description }))).toEqual(manifest.tools);
    expect(result.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['memory_store', 'memory_retrieve', 'account_info']),
    );
    expect(result.prompts.map((p) => p.name)).toEqual(manifest.prompts?.map((p) => p.name));
    expect(result.recall.messages[0]?.content).toEqual({
      type: 'text',
      text: manifest.prompts?.[0]?.text.replace(placeholder('arguments.topic'), 'the garden'),
    });
    expect(result.stored.isError, JSON.stringify(result.stored)).toBeFalsy();
    expect(result.stored.structuredContent).toMatchObject({ success: true, cost_cents: 1 });
    expect(result.got.structuredContent).toMatchObject({
      memory: { memory_key: 'bundle.first', memory_value: 'from the bundle' },
    });
    expect(result.info.structuredContent).toMatchObject({ plan: 'unlimited', credit_balance_cents: 50 });
    expect(code).toBe(0);
    expect(stderr).not.toMatch(STACK_TRACE);
    // The store is where the form said, and nothing went to the home directory.
    expect(await readdir(dataDir)).toContain(LOCAL_AGENT_FILE);
    expect(await readdir(home)).toEqual([]);
  });

  it('with the form left empty: no placeholder reaches the server, the store is the user data directory', async () => {
    const home = path.join(root, 'home-empty');
    await mkdir(home);
    const config = await getMcpConfigForManifest({
      manifest,
      extensionPath: unpacked,
      systemDirs: { HOME: home },
      userConfig: {},
      pathSeparator: path.sep,
    });
    expect(config?.env).toEqual({ DATA_DIR: '', AC_API_KEY: '' });
    expect(JSON.stringify(config)).not.toMatch(/\$\{/);
    const { result, code, stderr } = await withServer(config, home, async ({ client }) => ({
      stored: await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'bundle.default', memory_value: 'in the user data directory' },
      }),
      info: await client.callTool({ name: 'account_info', arguments: { limit: 1 } }),
    }));
    expect(result.stored.isError, JSON.stringify(result.stored)).toBeFalsy();
    expect(result.info.structuredContent).toMatchObject({ plan: 'unlimited' });
    expect(code).toBe(0);
    expect(stderr).toContain(`store: ${storeIn(home)}`);
    expect(await readdir(storeIn(home))).toContain(LOCAL_AGENT_FILE);
  });
});
