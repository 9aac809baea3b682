/**
 * Builds agent-context.mcpb, the MCP Bundle that Claude Desktop installs with a double click (`npm run bundle`):
 * a zip, made by Anthropic's `mcpb pack`, of the stdio server as npm publishes it, its production dependencies,
 * a PNG icon and manifest.json.
 *
 * 1. `npm run build`, unless --skip-build (the tests' global set-up has built dist/ already).
 * 2. The staging directory (build/mcpb, or --staging) gets the files `npm pack` would publish (package.json's
 *    "files": dist, README, LICENSE, docs, ...), then `npm ci --omit=dev --ignore-scripts` there with the
 *    repository's package-lock.json: exactly the locked production dependencies, no devDependency, no install
 *    script run.
 * 3. The icon (src/web/console/icon.svg) drawn as PNGs (scripts/bundle/icon.mjs).
 * 4. The tools and the prompt are asked of the staged server itself (`dist/cli.js mcp` on a throw-away data
 *    directory, tools/list and prompts/list through the SDK client), so the manifest lists what the bundle
 *    serves and cannot drift from the operation table; this also checks that the staged server starts on its
 *    production dependencies alone. The prompt's text is prompts/get with each argument set to the manifest's
 *    `${arguments.name}` placeholder.
 * 5. manifest.json: name, version, description, license, repository and engines from package.json; the server
 *    started as `node ${__dirname}/dist/cli.js mcp`; user_config for the data directory (DATA_DIR) and an
 *    optional API key (AC_API_KEY). Both default to "": Claude Desktop leaves a `${user_config.x}` of an option
 *    without a value unsubstituted (modelcontextprotocol/mcpb#250), and the server reads an empty variable as
 *    unset (src/config-env.ts): its own default data directory, and the local agent.
 * 6. `mcpb validate` on the manifest, then `mcpb pack` into agent-context.mcpb (or --out).
 *
 * Usage: node scripts/bundle.mjs [--skip-build] [--out <file.mcpb>] [--staging <dir>]
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { iconPng } from './bundle/icon.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values: options } = parseArgs({
  options: {
    'skip-build': { type: 'boolean', default: false },
    out: { type: 'string', default: path.join(root, 'agent-context.mcpb') },
    staging: { type: 'string', default: path.join(root, 'build', 'mcpb') },
  },
});
const out = path.resolve(options.out);
const staging = path.resolve(options.staging);

/** `${name}`: a placeholder the client substitutes in mcp_config (and prompts' text), not a JS template. */
const placeholder = (name) => `\${${name}}`;

/** The icon sizes drawn; the largest is also `icon`, at the 512x512 Claude Desktop recommends. */
const ICON_SIZES = [16, 32, 64, 128, 256, 512];

/** Runs a command to its end with its output shown (or captured), and stops the build if it fails. */
function run(command, args, { cwd = root, capture = false } = {}) {
  const result = spawnSync(command, args, {
    cwd,
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
    // Windows runs npm.cmd only through a shell.
    shell: process.platform === 'win32' && command.endsWith('.cmd'),
    stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  if (result.status !== 0)
    throw new Error(`bundle: ${path.basename(command)} ${args.join(' ')} exited with ${result.status}`);
  return result.stdout;
}

/** npm: the one running this script under `npm run`, else the one on PATH. */
function npm(args, options) {
  const cli = process.env.npm_execpath;
  if (cli && /npm-cli\.c?js$/.test(cli)) return run(process.execPath, [cli, ...args], options);
  return run(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, options);
}

/** The `mcpb` command of the pinned @anthropic-ai/mcpb, run with this Node. */
function mcpb(args, options) {
  const main = fileURLToPath(import.meta.resolve('@anthropic-ai/mcpb'));
  const packageDir = path.resolve(path.dirname(main), '..');
  const { bin } = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
  return run(
    process.execPath,
    [path.join(packageDir, typeof bin === 'string' ? bin : bin.mcpb), ...args],
    options,
  );
}

/** Every page of a list call (tools/list, prompts/list). */
async function listAll(list, key) {
  const items = [];
  let cursor;
  do {
    const page = await list(cursor === undefined ? {} : { cursor });
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/** The tools and prompts the staged server answers, as the manifest lists them. */
async function introspect(dir) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ac-bundle-introspect-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(dir, 'dist', 'cli.js'), 'mcp'],
    env: { DATA_DIR: dataDir, AC_LOG_LEVEL: 'silent' },
    cwd: dir,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'agent-context-bundle', version: '1.0.0' });
  try {
    await client.connect(transport);
    const tools = await listAll((params) => client.listTools(params), 'tools');
    const prompts = [];
    for (const prompt of await listAll((params) => client.listPrompts(params), 'prompts')) {
      const names = (prompt.arguments ?? []).map((argument) => argument.name);
      const got = await client.getPrompt({
        name: prompt.name,
        arguments: Object.fromEntries(names.map((name) => [name, placeholder(`arguments.${name}`)])),
      });
      const [message, ...more] = got.messages;
      if (more.length > 0 || message?.content.type !== 'text')
        throw new Error(`bundle: prompt ${prompt.name} is not one text message: the manifest cannot hold it`);
      prompts.push({
        name: prompt.name,
        ...(prompt.description ? { description: prompt.description } : {}),
        ...(names.length > 0 ? { arguments: names } : {}),
        text: message.content.text,
      });
    }
    return {
      tools: tools.map((tool) => ({
        name: tool.name,
        ...(tool.description ? { description: tool.description } : {}),
      })),
      prompts,
    };
  } finally {
    await client.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** package.json's author as the manifest's `{name, email?, url?}`; without one, the repository's owner. */
function authorOf(pkg, repositoryUrl) {
  if (typeof pkg.author === 'string') {
    const [, name, email, url] = /^([^<(]+?)\s*(?:<([^>]+)>)?\s*(?:\(([^)]+)\))?$/.exec(pkg.author) ?? [];
    return { name: name ?? pkg.author, ...(email ? { email } : {}), ...(url ? { url } : {}) };
  }
  if (pkg.author?.name) return pkg.author;
  const owner = new URL(repositoryUrl).pathname.split('/')[1];
  return { name: owner, url: `https://github.com/${owner}` };
}

function manifestOf(pkg, { tools, prompts }) {
  const repositoryUrl = (typeof pkg.repository === 'string' ? pkg.repository : pkg.repository.url).replace(
    /^git\+/,
    '',
  );
  const web = repositoryUrl.replace(/\.git$/, '');
  return {
    manifest_version: '0.3',
    name: pkg.name,
    display_name: pkg.name,
    version: pkg.version,
    description: pkg.description,
    long_description: [
      'Named text memories that last across conversations (store, retrieve, search, history, import and',
      'export) and live data (news, web search, weather, prices), in a store on this computer.',
      '',
      "Claude acts as the store's local agent, on the unlimited plan: it is never refused for credit. Leave the",
      'API key empty for that; give a key from `POST /api/ac/register` to act as that registered agent instead.',
      'If `agent-context serve` runs on the same data directory, the extension relays to it: one store, one ledger.',
    ].join('\n'),
    author: authorOf(pkg, repositoryUrl),
    repository: { type: 'git', url: repositoryUrl },
    homepage: pkg.homepage ?? web,
    documentation: `${web}/blob/main/docs/mcp.md`,
    support: `${web}/issues`,
    icon: 'icon.png',
    icons: ICON_SIZES.map((size) => ({ src: iconFile(size), size: `${size}x${size}` })),
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
    tools,
    prompts,
    keywords: ['memory', 'agents', 'live data', 'news', 'weather', 'prices', 'mcp'],
    license: pkg.license,
    compatibility: {
      platforms: ['darwin', 'win32', 'linux'],
      runtimes: { node: pkg.engines.node },
    },
    user_config: {
      data_dir: {
        type: 'directory',
        title: 'Data directory',
        description:
          'Where the store lives. Leave empty for your user data directory (~/Library/Application Support/' +
          'agent-context on macOS, %LOCALAPPDATA%\\agent-context\\Data on Windows, ~/.local/share/agent-context ' +
          'on Linux), the same store `npx agent-context mcp` uses.',
        required: false,
        default: '',
      },
      api_key: {
        type: 'string',
        title: 'API key (optional)',
        description:
          'An agent key (ac_...) to act as that registered agent, paying from its credit. Leave empty to act ' +
          "as the store's local agent, on the unlimited plan.",
        sensitive: true,
        required: false,
        default: '',
      },
    },
  };
}

function iconFile(size) {
  return size === ICON_SIZES.at(-1) ? 'icon.png' : `icons/icon-${size}.png`;
}

const started = Date.now();
if (!options['skip-build']) npm(['run', '--silent', 'build']);
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

// 2. What npm would publish, plus the locked production dependencies.
rmSync(staging, { recursive: true, force: true });
mkdirSync(staging, { recursive: true });
const [packed] = JSON.parse(npm(['pack', '--dry-run', '--json', '--ignore-scripts'], { capture: true }));
for (const { path: file } of packed.files) {
  mkdirSync(path.dirname(path.join(staging, file)), { recursive: true });
  copyFileSync(path.join(root, file), path.join(staging, file));
}
copyFileSync(path.join(root, 'package-lock.json'), path.join(staging, 'package-lock.json'));
const ci = ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'];
npm([...ci, '--loglevel=error'], { cwd: staging });
rmSync(path.join(staging, 'package-lock.json'));

// 3. The icons.
const svg = readFileSync(path.join(root, 'src', 'web', 'console', 'icon.svg'), 'utf8');
for (const size of ICON_SIZES) {
  const file = path.join(staging, iconFile(size));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, iconPng(svg, size));
}

// 4-6. The manifest, validated, then packed.
const manifest = manifestOf(pkg, await introspect(staging));
const manifestFile = path.join(staging, 'manifest.json');
writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
mcpb(['validate', manifestFile]);
mkdirSync(path.dirname(out), { recursive: true });
mcpb(['pack', '.', out], { cwd: staging }); // from the staging directory, so that its listing is relative
const megabytes = (statSync(out).size / 1024 / 1024).toFixed(1);
const shown = path.relative(process.cwd(), out).startsWith('..') ? out : path.relative(process.cwd(), out);
console.log(
  `bundle: ${shown} (${megabytes} MB, ${manifest.tools.length} tools) ` +
    `in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
