/**
 * The Python MCP SDK (`mcp` on PyPI, 2.3.0: a client from another language) against agent-context over stdio
 * and over Streamable HTTP (the JSON file store), in both protocol eras: `initialize`
 * (2025-11-25) and `server/discover` (2026-07-28). `npm run test:python`, not part of `npm test` (which needs
 * nothing but Node): it makes a virtual environment with `python3 -m venv` and installs the SDK with pip once
 * (kept in the system's temporary directory), or uses the Python named by AC_TEST_PYTHON.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import { createOperations } from '../../src/core/operation-table.js';
import { createSchemas } from '../../src/core/schemas.js';
import { runProcess } from '../helpers/run-process.js';
import { CLI, type SpawnedServer, spawnServe } from '../helpers/spawn-serve.js';
import { request } from '../helpers/test-server.js';

const SDK = 'mcp==2.3.0';
const SCRIPT = path.resolve('test/python/mcp_client_check.py');
/** The tools the operation table offers, by name. */
const TOOLS = createOperations(createSchemas(DEFAULT_LIMITS))
  .flatMap((op) => (op.mcp ? [op.mcp.tool] : []))
  .sort();

/** A Python with the SDK installed: AC_TEST_PYTHON, or a venv made once in the temporary directory. */
async function python(): Promise<string> {
  if (process.env.AC_TEST_PYTHON) return process.env.AC_TEST_PYTHON;
  const venv = path.join(tmpdir(), `ac-python-${SDK.replace('==', '-')}`);
  const bin = path.join(venv, 'bin', 'python');
  if (!existsSync(bin)) {
    const made = await runProcess('python3', ['-m', 'venv', venv], process.env);
    expect(made.code, `python3 -m venv: ${made.stderr}`).toBe(0);
  }
  const check = await runProcess(bin, ['-c', 'import mcp'], process.env);
  if (check.code !== 0) {
    const pip = await runProcess(bin, ['-m', 'pip', 'install', '--quiet', SDK], process.env);
    expect(pip.code, `pip install ${SDK}: ${pip.stderr}`).toBe(0);
  }
  return bin;
}

const ERAS = [
  { era: 'legacy', revision: '2025-11-25' },
  { era: 'modern', revision: '2026-07-28' },
] as const;

describe('the Python MCP SDK as a client', () => {
  let py: string;
  let root: string;
  let server: SpawnedServer;
  let key: string;

  beforeAll(async () => {
    py = await python();
    root = await mkdtemp(path.join(tmpdir(), 'ac-python-'));
    server = await spawnServe({ DATA_DIR: path.join(root, 'served') });
    const reg = await request(server.url, 'POST', '/api/ac/register', {
      body: { email: 'python@example.com' },
    });
    key = reg.body.agent_key as string;
  }, 300_000);
  afterAll(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await rm(root, { recursive: true, force: true });
  });

  async function check(args: string[], env: Record<string, string> = {}) {
    const run = await runProcess(py, [SCRIPT, ...args], { ...process.env, ...env });
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout.trim().split('\n').at(-1) as string);
  }

  function expectSession(out: any, mode: string, era: string, revision: string) {
    expect(out.protocol_version).toBe(revision);
    expect(out.tools).toEqual(TOOLS);
    expect(out.stored).toMatchObject({ success: true, cost_cents: 1 });
    expect(out.retrieved.memory).toMatchObject({
      memory_key: `python-${mode}-${era}`,
      memory_value: 'from Python',
    });
    expect(out.missing).toMatchObject({
      is_error: true,
      body: { code: 'not_found', memory_key: 'not-there' },
    });
  }

  for (const { era, revision } of ERAS) {
    it(`over stdio, ${revision}: the local agent stores, reads back, gets a not_found result and its account`, async () => {
      const out = await check(['stdio', era, CLI], { DATA_DIR: path.join(root, `stdio-${era}`) });
      expectSession(out, 'stdio', era, revision);
      expect(out.account).toMatchObject({ plan: 'unlimited' });
    });

    it(`over Streamable HTTP, ${revision}: a registered key pays from the balance REST shows`, async () => {
      const before = (await request(server.url, 'GET', '/api/ac/account', { key })).body.credit_balance_cents;
      const out = await check(['http', era, `${server.url}/mcp`, key]);
      expectSession(out, 'http', era, revision);
      expect(out.account).toMatchObject({ email: 'python@example.com', credit_balance_cents: before - 2 }); // a failure is free
    });
  }
});
