/**
 * The package as npm publishes it works on its own. `npm pack` holds package.json, README.md, LICENSE, docs, mcp.json,
 * server.json, the built JS and the PostgreSQL store's SQL migrations only, and nothing in it points outside it
 * (no source maps, no relative import that leaves it, no import of a package it does not depend on). Installed globally from the tarball (runtime
 * dependencies from the registry) and started as a desktop client starts it, with only HOME: the store is
 * made in the user data directory, owner-only, whatever the working directory, and nothing else is written;
 * the local agent makes 1,000 calls on the unlimited plan, each recorded at cost 1 and amount 0 with the
 * balance equal to the ledger's sum; `npx` runs the same server from the tarball with the npm cache offline;
 * and a user who cannot write a data directory gets a server that answers and says what to do.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { access, chmod, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { LOCAL_AGENT_FILE } from '../../src/store/json/json-file-store.js';
import { spawnServe } from '../helpers/spawn-serve.js';
import { connectStdio, type StdioConnection, toolJson } from '../helpers/stdio-client.js';

const run = promisify(execFile);
const REPO = process.cwd();
/** npm next to the node running the tests, with no update check. */
const NPM_ENV = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' };
/** npx beside the node running the tests, else the one on PATH (a Node from the registry ships no npx). */
const NPX = existsSync(path.join(path.dirname(process.execPath), 'npx'))
  ? path.join(path.dirname(process.execPath), 'npx')
  : 'npx';
const STACK_TRACE = /\n\s+at .+:\d+:\d+/;

/** Where env-paths puts the user data directory on Linux when XDG_DATA_HOME is unset. */
const storeIn = (home: string) => path.join(home, '.local', 'share', 'agent-context');

/** Connects an MCP client to a stdio server, runs `work`, and always closes it (the process exits). */
async function withStdio<T>(
  env: Record<string, string>,
  options: { cwd: string; command: string; args: string[] },
  work: (connection: StdioConnection) => Promise<T>,
): Promise<{ result: T; code: number | null; stderr: string }> {
  const connection = await connectStdio(env, options);
  let result: T;
  try {
    result = await work(connection);
  } finally {
    await connection.client.close();
  }
  return { result, code: await connection.exited, stderr: connection.stderr() };
}

/** Every file and directory under `dir`, with its mode bits. */
async function modesUnder(dir: string): Promise<{ path: string; dir: boolean; mode: number }[]> {
  const found: { path: string; dir: boolean; mode: number }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    found.push({ path: full, dir: entry.isDirectory(), mode: (await stat(full)).mode & 0o777 });
    if (entry.isDirectory()) found.push(...(await modesUnder(full)));
  }
  return found;
}

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** The specifiers a module imports: static, side-effect and dynamic imports with a literal. */
function importsOf(js: string): string[] {
  return [...js.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"\n]+)\1/g)].map(
    (m) => m[2] as string,
  );
}

/** The package a bare specifier names: `@scope/name` or `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

describe('the packed package, installed from its tarball', () => {
  let root: string;
  let tarball: string;
  let entries: string[];
  let unpacked: string;
  let npmCache: string;
  let bin: string;
  let home: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ac-packed-'));
    await chmod(root, 0o755); // the installed bin must be reachable by another user (see the last test)
    const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', root], {
      cwd: REPO,
      env: NPM_ENV,
    });
    const [info] = JSON.parse(packed.stdout);
    tarball = path.join(root, info.filename);
    entries = (await run('tar', ['-tzf', tarball])).stdout.trim().split('\n').sort();
    unpacked = path.join(root, 'unpacked');
    await mkdir(unpacked);
    await run('tar', ['-xzf', tarball, '-C', unpacked]);

    // Runtime dependencies only, from the registry, into a cache of its own that `npx` later uses offline.
    npmCache = path.join(root, 'npm-cache');
    const prefix = path.join(root, 'prefix');
    await run(
      'npm',
      ['install', '-g', '--prefix', prefix, tarball, '--no-audit', '--no-fund', '--prefer-offline'],
      { cwd: root, env: { ...NPM_ENV, npm_config_cache: npmCache } },
    );
    bin = path.join(prefix, 'bin', 'agent-context');
    home = path.join(root, 'home');
    await mkdir(home);
  }, 240_000);
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('holds package.json, README.md, LICENSE, mcp.json, server.json, docs, the built JS, the SQL migrations and the word vectors, nothing else', async () => {
    const top = [
      'package/package.json',
      'package/README.md',
      'package/LICENSE',
      'package/mcp.json',
      'package/server.json',
    ];
    const other = entries.filter(
      (e) =>
        !top.includes(e) &&
        !/^package\/dist\/[\w./-]+\.js$/.test(e) &&
        !/^package\/dist\/store\/postgres\/migrations\/\d{4}_[a-z0-9_]+\.sql$/.test(e) &&
        // The pages' built files (the console's bundle, the API reference's Swagger UI), served as they are.
        !/^package\/dist\/web\/(console|docs)\/[\w.-]+$/.test(e) &&
        // The in-process embedding model's word vectors and their card (semantic search, issue 31).
        !/^package\/dist\/embeddings\/word-vectors-en\.(bin|md)$/.test(e) &&
        !/^package\/docs\/[\w-]+\.md$/.test(e),
    );
    // The README's links into docs/ resolve inside the package too.
    for (const doc of ['api', 'mcp', 'configuration', 'operations', 'decisions', 'architecture']) {
      expect(entries).toContain(`package/docs/${doc}.md`);
    }
    expect(other).toEqual([]);
    for (const needed of [
      ...top,
      'package/dist/cli.js',
      'package/dist/web/console/index.html',
      'package/dist/web/docs/index.html',
    ])
      expect(entries).toContain(needed);
    // Every migration, as in the repository, next to the module that applies it (tsc does not copy .sql:
    // the build does, scripts/copy-sql.mjs).
    const migrations = path.join('src', 'store', 'postgres', 'migrations');
    const sources = (await readdir(path.join(REPO, migrations))).filter((f) => f.endsWith('.sql')).sort();
    expect(sources).toContain('0001_initial.sql');
    expect(entries.filter((e) => e.endsWith('.sql'))).toEqual(
      sources.map((f) => `package/dist/store/postgres/migrations/${f}`),
    );
    for (const file of sources) {
      expect(
        await readFile(path.join(unpacked, 'package/dist/store/postgres/migrations', file), 'utf8'),
      ).toBe(await readFile(path.join(REPO, migrations, file), 'utf8'));
    }
    // And the packed migrator finds them where it runs from.
    const packedMigrate = path.join(unpacked, 'package/dist/store/postgres/migrate.js');
    const { loadMigrations } = await import(pathToFileURL(packedMigrate).href);
    expect((await loadMigrations()).map((m: { file: string }) => m.file)).toEqual(sources);
    expect(entries.filter((entry) => /\.map$|tsbuildinfo|^package\/(src|test)\//.test(entry))).toEqual([]);
    // Each JS file is built from a source that still exists: no stale output of a removed module.
    const stale: string[] = [];
    // (dist/web is rebuilt whole by each build: scripts/build-web.mjs.)
    for (const entry of entries.filter(
      (e) => e.startsWith('package/dist/') && !e.startsWith('package/dist/web/'),
    )) {
      const source = path.join(REPO, 'src', entry.slice('package/dist/'.length).replace(/\.js$/, '.ts'));
      if (!(await exists(source))) stale.push(entry);
    }
    expect(stale, 'stale build output in dist/: delete dist/ and run npm run build').toEqual([]);
    // server.json is the repository's, and the bin is an executable script.
    const packedPkg = JSON.parse(await readFile(path.join(unpacked, 'package/package.json'), 'utf8'));
    expect(await readFile(path.join(unpacked, 'package/server.json'), 'utf8')).toBe(
      await readFile(path.join(REPO, 'server.json'), 'utf8'),
    );
    expect(packedPkg.bin).toEqual({ 'agent-context': 'dist/cli.js' });
    expect(await readFile(path.join(unpacked, 'package/dist/cli.js'), 'utf8')).toMatch(
      /^#!\/usr\/bin\/env node\n/,
    );
  });

  it('refers to nothing outside itself: no source maps, relative imports stay inside, bare ones are dependencies', async () => {
    const pkgRoot = path.join(unpacked, 'package');
    const packedPkg = JSON.parse(await readFile(path.join(pkgRoot, 'package.json'), 'utf8'));
    const dependencies = new Set(Object.keys(packedPkg.dependencies));
    const builtins = new Set(builtinModules);
    const problems: string[] = [];
    for (const entry of entries.filter((e) => e.endsWith('.js'))) {
      const file = path.join(unpacked, entry);
      const js = await readFile(file, 'utf8');
      if (/^\/\/# sourceMappingURL=/mu.test(js)) problems.push(`${entry}: sourceMappingURL`);
      // A page's bundle runs in the browser and imports nothing: only the service's modules are checked.
      if (entry.startsWith('package/dist/web/')) continue;
      for (const specifier of importsOf(js)) {
        if (specifier.startsWith('.')) {
          const target = path.resolve(path.dirname(file), specifier);
          if (!target.startsWith(`${pkgRoot}${path.sep}`))
            problems.push(`${entry}: ${specifier} leaves the package`);
          else if (!entries.includes(path.relative(unpacked, target)))
            problems.push(`${entry}: ${specifier} missing`);
        } else if (specifier.startsWith('node:') || builtins.has(specifier)) {
          // Node's own
        } else if (!dependencies.has(packageOf(specifier))) {
          problems.push(`${entry}: ${specifier} is not a dependency`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('started from / with only HOME: makes the store in the user data directory, owner-only, and nothing else', async () => {
    const store = storeIn(home);
    const rootBefore = (await readdir('/')).sort();
    const { result, code, stderr } = await withStdio(
      { HOME: home },
      { cwd: '/', command: bin, args: ['mcp'] },
      ({ client }) =>
        client.callTool({ name: 'memory_store', arguments: { memory_key: 'first', memory_value: 'one' } }),
    );
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      success: true,
      cost_cents: 1,
      credit_balance_cents: 50,
    });
    expect(code).toBe(0);
    expect(stderr).toContain(`store: ${store}`);
    expect(stderr).not.toMatch(STACK_TRACE);

    expect((await stat(store)).mode & 0o777).toBe(0o700);
    const inside = await modesUnder(store);
    expect(inside.map((e) => path.basename(e.path))).toContain(LOCAL_AGENT_FILE);
    for (const entry of inside)
      expect([entry.path, entry.mode]).toEqual([entry.path, entry.dir ? 0o700 : 0o600]);
    expect((await readdir('/')).sort()).toEqual(rootBefore);
    expect(await readdir(home)).toEqual(['.local']);
  });

  it('started from the home directory: the same store and the same local agent', async () => {
    const saved = JSON.parse(await readFile(path.join(storeIn(home), LOCAL_AGENT_FILE), 'utf8'));
    const { result, code } = await withStdio(
      { HOME: home },
      { cwd: home, command: bin, args: ['mcp'] },
      async ({ client }) => ({
        got: await client.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'first' } }),
        info: await client.callTool({ name: 'account_info', arguments: { limit: 1 } }),
      }),
    );
    expect(result.got.structuredContent).toMatchObject({ memory: { memory_value: 'one' } });
    expect(result.info.structuredContent).toMatchObject({ email: saved.email, plan: 'unlimited' });
    expect(code).toBe(0);
    expect(await readdir(home)).toEqual(['.local']);
  });

  it('the local agent makes 1,000 calls, never refused; each recorded at cost 1, amount 0; balance = ledger sum', async () => {
    const CALLS = 1_000;
    const BATCH = 10;
    const { result, code } = await withStdio(
      { HOME: home },
      { cwd: '/', command: bin, args: ['mcp'] },
      async ({ client }) => {
        const failures: unknown[] = [];
        for (let i = 0; i < CALLS; i += BATCH) {
          const batch = await Promise.all(
            Array.from({ length: BATCH }, (_, j) =>
              client.callTool({
                name: 'memory_store',
                arguments: { memory_key: `bulk-${i + j}`, memory_value: `value ${i + j}` },
              }),
            ),
          );
          for (const stored of batch) {
            const body = stored.structuredContent as any;
            if (stored.isError || body?.cost_cents !== 1 || body?.credit_balance_cents !== 50)
              failures.push(stored.isError ? toolJson(stored) : body);
          }
        }
        const info = await client.callTool({ name: 'account_info', arguments: {} });
        return { failures, info: info.structuredContent };
      },
    );
    expect(result.failures).toEqual([]);
    expect(result.info).toMatchObject({ plan: 'unlimited', credit_balance_cents: 50 });
    expect(code).toBe(0);

    // The ledger, read in-process once the server has exited.
    const dataDir = storeIn(home);
    const { agent_key: key } = JSON.parse(await readFile(path.join(dataDir, LOCAL_AGENT_FILE), 'utf8'));
    const service = await openService(loadConfig({ DATA_DIR: dataDir, AC_LOG_LEVEL: 'silent' }), {
      command: 'test',
    });
    try {
      const { id } = await service.core.accounts.authenticate(key);
      const { ledger, account } = await service.store.read(async (r) => ({
        ledger: await r.listLedger(id, 5_000),
        account: await r.getAccount(id),
      }));
      const bulk = ledger.filter((e) => e.operation === 'memory_store' && e.memoryKey?.startsWith('bulk-'));
      expect(bulk).toHaveLength(CALLS);
      expect(new Set(bulk.map((e) => e.memoryKey)).size).toBe(CALLS);
      for (const entry of bulk)
        expect(entry).toMatchObject({
          costCents: 1,
          amountCents: 0,
          plan: 'unlimited',
          balanceAfterCents: 50,
        });
      expect(ledger.length).toBeLessThan(5_000); // the whole ledger was read
      expect(account?.balanceCents).toBe(ledger.reduce((sum, e) => sum + e.amountCents, 0));
      expect(account?.balanceCents).toBe(50);
    } finally {
      await service.close();
    }
  }, 180_000);

  it('serves the console and the API reference from the installed package, with their files', async () => {
    const dataDir = path.join(root, 'pages-data');
    const server = await spawnServe({ HOME: home, DATA_DIR: dataDir }, bin);
    try {
      for (const page of ['/console', '/docs']) {
        const res = await fetch(`${server.url}${page}`);
        expect(res.status, page).toBe(200);
        expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
        const html = await res.text();
        // Every script and stylesheet the page names is served from the package.
        const assets = [...html.matchAll(/(?:src|href)="(\/(?:console|docs)\/[^"]+)"/gu)].map((m) => m[1]);
        expect(assets.length, page).toBeGreaterThan(1);
        for (const asset of assets) expect((await fetch(`${server.url}${asset}`)).status, asset).toBe(200);
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 60_000);

  it('npx runs the same server from the tarball, with the npm cache offline', async () => {
    const npxHome = path.join(root, 'npx-home');
    await mkdir(npxHome);
    const env = {
      HOME: npxHome,
      npm_config_cache: npmCache,
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
    };
    const { result, code, stderr } = await withStdio(
      env,
      { cwd: '/', command: NPX, args: ['-y', `--package=${tarball}`, 'agent-context', 'mcp'] },
      async ({ client }) => ({
        server: client.getServerVersion(),
        tools: (await client.listTools()).tools.map((t) => t.name),
      }),
    );
    expect(result.server).toMatchObject({ name: 'agent-context' });
    expect(result.tools).toEqual(expect.arrayContaining(['memory_store', 'memory_retrieve', 'account_info']));
    expect(code).toBe(0);
    expect(stderr).toContain(`store: ${storeIn(npxHome)}`);
  }, 90_000);

  it('a user who cannot write a data directory: answers initialize and tools/list, every call says what to do', async () => {
    // As root: the installed bin as nobody (65534), whose HOME does not exist. Otherwise: this user, HOME read-only.
    let command: string;
    let args: string[];
    let userHome: string;
    if (process.getuid?.() === 0) {
      userHome = '/nonexistent';
      const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'];
      const found = (await Promise.all(setpriv.map(exists))).findIndex(Boolean);
      if (found >= 0) {
        command = setpriv[found] as string;
        args = ['--reuid=65534', '--regid=65534', '--clear-groups', bin, 'mcp'];
      } else {
        command = 'runuser';
        args = ['-u', 'nobody', '--', bin, 'mcp'];
      }
    } else {
      userHome = path.join(root, 'read-only-home');
      await mkdir(userHome);
      await chmod(userHome, 0o555);
      command = bin;
      args = ['mcp'];
    }
    const { result, code, stderr } = await withStdio(
      { HOME: userHome },
      { cwd: '/', command, args },
      async ({ client }) => ({
        tools: (await client.listTools()).tools.map((t) => t.name),
        stored: await client.callTool({
          name: 'memory_store',
          arguments: { memory_key: 'a', memory_value: 'b' },
        }),
      }),
    );
    if (userHome !== '/nonexistent') await chmod(userHome, 0o755);
    expect(result.tools).toContain('memory_store');
    expect(result.stored.isError).toBe(true);
    const body = toolJson(result.stored);
    expect(body.code).toBe('unavailable');
    expect(body.error).toContain(`The data directory ${storeIn(userHome)} cannot be used`);
    expect(body.error).toContain('Set DATA_DIR');
    expect(code).toBe(0);
    expect(stderr).toContain('cannot serve');
    expect(stderr).not.toMatch(STACK_TRACE);
  });
});
