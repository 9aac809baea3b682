/**
 * The official MCP Inspector CLI (the pinned dev dependency) drives the built server as a user would:
 * over stdio (`agent-context mcp`, the local agent) it lists the nine tools, stores a memory, reads the
 * ac://account resource and exits 5 with the error body on a failing call; over Streamable HTTP
 * (`agent-context serve`, a key registered over REST in X-API-Key) it lists, stores and reads the account.
 * Both protocol eras: the Inspector's default (2025-11-25, initialize) and `--protocol-era modern` (2026-07-28).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProcessRun, runProcess } from '../helpers/run-process.js';
import { CLI, type SpawnedServer, spawnServe } from '../helpers/spawn-serve.js';
import { request } from '../helpers/test-server.js';

/** The Inspector's launcher, run with this Node (`npx @modelcontextprotocol/inspector@2.12.0` in the docs). */
const INSPECTOR = path.resolve(
  'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
);

const TOOLS = [
  'memory_store',
  'memory_retrieve',
  'memory_delete',
  'memory_search',
  'memory_store_batch',
  'memory_history',
  'memory_restore',
  'memory_import',
  'data_fetch',
  'account_info',
];

interface InspectorRun extends ProcessRun {
  /** stdout parsed (`--format json` prints one JSON object). */
  json: any;
}

/** Runs `inspector --cli <args> --format json` with HOME in `home`, so nothing lands in the real one. */
async function inspector(args: string[], home: string): Promise<InspectorRun> {
  const run = await runProcess(process.execPath, [INSPECTOR, '--cli', ...args, '--format', 'json'], {
    ...process.env,
    HOME: home,
    MCP_CATALOG_PATH: path.join(home, 'catalog.json'),
  });
  let json: unknown;
  try {
    json = JSON.parse(run.stdout);
  } catch {
    json = undefined;
  }
  return { ...run, json };
}

/** Lists the tools and stores greeting=hello through `target`; returns the store's result. */
async function listAndStore(target: string[], home: string): Promise<any> {
  const list = await inspector([...target, '--method', 'tools/list'], home);
  expect(list.code, list.stderr).toBe(0);
  expect(list.json.result.tools.map((t: { name: string }) => t.name).sort()).toEqual([...TOOLS].sort());
  const stored = await inspector(
    [
      ...target,
      '--method',
      'tools/call',
      '--tool-name',
      'memory_store',
      '--tool-arg',
      'memory_key=greeting',
      'memory_value=hello',
    ],
    home,
  );
  expect(stored.code, stored.stderr).toBe(0);
  expect(stored.json.result.isError).toBeFalsy();
  return toolText(stored.json.result);
}

/** The JSON in a tool result's first text block. */
function toolText(result: any): any {
  return JSON.parse(result.content[0].text);
}

/** The Inspector's flags for each era: its default, and 2026-07-28. */
const ERAS = [
  { era: '2025-11-25', flags: [] as string[] },
  { era: '2026-07-28', flags: ['--protocol-era', 'modern'] },
];

describe.each(ERAS)('the MCP Inspector CLI against agent-context mcp (stdio), $era', ({ flags }) => {
  let root: string;
  /** `<node> dist/cli.js mcp -e DATA_DIR=… -e HOME=…`: the server, as the Inspector is told to start it. */
  let target: string[];
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ac-inspector-stdio-'));
    target = [
      process.execPath,
      CLI,
      'mcp',
      '-e',
      `DATA_DIR=${path.join(root, 'store')}`,
      '-e',
      `HOME=${root}`,
      ...flags,
    ];
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('lists the tools, stores a memory, reads ac://account, and exits 5 with the body of a failing call', async () => {
    expect(await listAndStore(target, root)).toMatchObject({
      success: true,
      memory: { memory_key: 'greeting', memory_value: 'hello' },
      cost_cents: 1,
      credit_balance_cents: 50,
    });

    const account = await inspector([...target, '--method', 'resources/read', '--uri', 'ac://account'], root);
    expect(account.code, account.stderr).toBe(0);
    const contents = account.json.result.contents[0];
    expect(contents).toMatchObject({ uri: 'ac://account', mimeType: 'application/json' });
    const body = JSON.parse(contents.text);
    expect(body).toMatchObject({ plan: 'unlimited', credit_balance_cents: 50 });
    expect(body.recent_transactions[0]).toMatchObject({
      operation: 'memory_store',
      cost_cents: 1,
      amount_cents: 0,
      memory_key: 'greeting',
    });

    const missing = await inspector(
      [
        ...target,
        '--method',
        'tools/call',
        '--tool-name',
        'memory_retrieve',
        '--tool-arg',
        'memory_key=nope',
      ],
      root,
    );
    expect(missing.code, missing.stderr).toBe(5);
    expect(missing.json.result.isError).toBe(true);
    expect(toolText(missing.json.result)).toMatchObject({ code: 'not_found', memory_key: 'nope' });
  });
});

describe.each(ERAS)(
  'the MCP Inspector CLI against agent-context serve (Streamable HTTP), $era',
  ({ era, flags }) => {
    let root: string;
    let server: SpawnedServer;
    beforeAll(async () => {
      root = await mkdtemp(path.join(tmpdir(), 'ac-inspector-http-'));
      server = await spawnServe({ DATA_DIR: path.join(root, 'store'), HOME: root });
    });
    afterAll(async () => {
      if (server && server.child.exitCode === null) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      await rm(root, { recursive: true, force: true });
    });

    it('with the key in X-API-Key: lists the tools, stores a memory (charged), reads ac://account', async () => {
      const reg = await request(server.url, 'POST', '/api/ac/register', {
        body: { email: `inspector-${era}@example.com` },
      });
      expect(reg.status, reg.text).toBe(200);
      const key = reg.body.agent_key as string;
      const target = [`${server.url}/mcp`, '--transport', 'http', '--header', `X-API-Key: ${key}`, ...flags];

      expect(await listAndStore(target, root)).toMatchObject({
        success: true,
        cost_cents: 1,
        credit_balance_cents: 49,
      });

      const account = await inspector(
        [...target, '--method', 'resources/read', '--uri', 'ac://account'],
        root,
      );
      expect(account.code, account.stderr).toBe(0);
      expect(JSON.parse(account.json.result.contents[0].text)).toMatchObject({
        email: `inspector-${era}@example.com`,
        plan: 'pay-as-you-go',
        credit_balance_cents: 49,
      });

      // The same balance over REST: one ledger behind both faces.
      const rest = await request(server.url, 'GET', '/api/ac/account', { key });
      expect(rest.body).toMatchObject({ credit_balance_cents: 49 });
    });
  },
);
