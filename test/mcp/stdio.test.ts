/**
 * MCP over real stdio: the built `agent-context mcp` started as a desktop client starts it (working directory
 * `/`), the local agent on the unlimited plan, and a server that cannot serve still answering.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openService } from '../../src/service.js';
import { LOCAL_AGENT_FILE, STORE_FILE } from '../../src/store/json/json-file-store.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { testDatabase } from '../helpers/postgres.js';
import { CLI } from '../helpers/spawn-serve.js';
import { connectStdio, initializeAndCall, sendAndClose, toolJson } from '../helpers/stdio-client.js';
import { ledgerSum, startTestServer } from '../helpers/test-server.js';

async function registerIn(dataDir: string, email: string): Promise<string> {
  const config = loadConfig({ DATA_DIR: dataDir, AC_LOG_LEVEL: 'silent' });
  const service = await openService(config, { command: 'test', live: new FakeLiveSource() });
  try {
    return (await service.core.accounts.register({ email })).agent_key;
  } finally {
    await service.close();
  }
}

describe('MCP over stdio', () => {
  let root: string;
  let dataDir: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ac-stdio-'));
    dataDir = path.join(root, 'store');
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('without AC_API_KEY uses a local agent on the unlimited plan, created once, its key kept owner-only and never printed', async () => {
    const first = await connectStdio({ DATA_DIR: dataDir });
    const stored = await first.client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'hello', memory_value: 'world' },
    });
    expect(stored.structuredContent).toMatchObject({
      success: true,
      cost_cents: 1,
      credit_balance_cents: 50,
    });
    await first.client.close();
    expect(await first.exited).toBe(0);

    const saved = JSON.parse(await readFile(path.join(dataDir, LOCAL_AGENT_FILE), 'utf8'));
    expect(saved.agent_key).toMatch(/^ac_/);
    expect(first.stderr()).not.toContain(saved.agent_key);
    expect(first.stderr()).toContain(`store: ${dataDir}`);

    const second = await connectStdio({ DATA_DIR: dataDir });
    const got = await second.client.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'hello' } });
    expect(got.structuredContent).toMatchObject({ memory: { memory_value: 'world' }, cost_cents: 1 });
    const info = await second.client.callTool({ name: 'account_info', arguments: { limit: 3 } });
    expect(info.structuredContent).toMatchObject({ plan: 'unlimited', credit_balance_cents: 50 });
    expect((info.structuredContent as any).recent_transactions.slice(0, 2)).toMatchObject([
      {
        operation: 'memory_retrieve',
        cost_cents: 1,
        amount_cents: 0,
        plan: 'unlimited',
        memory_key: 'hello',
      },
      { operation: 'memory_store', cost_cents: 1, amount_cents: 0, plan: 'unlimited', memory_key: 'hello' },
    ]);
    await second.client.close();
    expect(await second.exited).toBe(0);
  });

  it('moves a local agent made by an older version (pay-as-you-go) to the unlimited plan', async () => {
    const dir = path.join(root, 'older');
    await mkdir(dir);
    const email = 'local-0123456789ab@agent-context.local';
    const key = await registerIn(dir, email);
    await writeFile(path.join(dir, LOCAL_AGENT_FILE), JSON.stringify({ agent_key: key, email }), {
      mode: 0o644,
    });
    const { client, exited } = await connectStdio({ DATA_DIR: dir });
    const info = await client.callTool({ name: 'account_info', arguments: {} });
    expect(info.structuredContent).toMatchObject({ email, plan: 'unlimited', credit_balance_cents: 50 });
    expect((info.structuredContent as any).recent_transactions[0]).toMatchObject({
      operation: 'plan_change',
      amount_cents: 0,
      plan: 'unlimited',
    });
    await client.close();
    expect(await exited).toBe(0);
    expect((await stat(path.join(dir, LOCAL_AGENT_FILE))).mode & 0o777).toBe(0o600);
  });

  it("leaves the local agent's plan to the operator once it has been set", async () => {
    const saved = JSON.parse(await readFile(path.join(dataDir, LOCAL_AGENT_FILE), 'utf8'));
    const config = loadConfig({ DATA_DIR: dataDir, AC_LOG_LEVEL: 'silent' });
    const service = await openService(config, { command: 'test', live: new FakeLiveSource() });
    await service.core.accounts.setPlan({ email: saved.email, plan: 'pay-as-you-go' });
    await service.close();
    const { client, exited } = await connectStdio({ DATA_DIR: dataDir });
    const info = await client.callTool({ name: 'account_info', arguments: {} });
    expect(info.structuredContent).toMatchObject({ plan: 'pay-as-you-go' });
    await client.close();
    expect(await exited).toBe(0);
    const back = await openService(config, { command: 'test', live: new FakeLiveSource() });
    await back.core.accounts.setPlan({ email: saved.email, plan: 'unlimited' });
    await back.close();
  });

  it('with AC_API_KEY acts as that agent, paying from the balance REST shows', async () => {
    const key = await registerIn(dataDir, 'stdio@example.com');
    const { client, exited } = await connectStdio({ DATA_DIR: dataDir, AC_API_KEY: key });
    await client.callTool({ name: 'memory_store', arguments: { memory_key: 'k', memory_value: 'v' } });
    const info = await client.callTool({ name: 'account_info', arguments: {} });
    expect(info.structuredContent).toMatchObject({
      email: 'stdio@example.com',
      plan: 'pay-as-you-go',
      credit_balance_cents: 49,
    });
    await client.close();
    expect(await exited).toBe(0);

    const server = await startTestServer({ dataDir, live: new FakeLiveSource() });
    try {
      const res = await server.request('GET', '/api/ac/memory', {
        key,
        query: { agent_key: key, memory_key: 'k' },
      });
      expect(res.body).toMatchObject({ memory: { memory_value: 'v' }, credit_balance_cents: 48 });
    } finally {
      await server.stop();
    }
  });

  it('on a shared PostgreSQL database, with AC_API_KEY: one ledger with the servers of that database', async () => {
    const db = await testDatabase({ label: 'stdio' });
    const server = await startTestServer({
      env: { DATABASE_URL: db.url, DATA_DIR: '' },
      live: new FakeLiveSource(),
    });
    try {
      const key = await server.register('stdio-pg@example.com');
      const { client, exited } = await connectStdio({ DATABASE_URL: db.url, AC_API_KEY: key });
      const stored = await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'pg', memory_value: 'in the database' },
      });
      expect(stored.structuredContent).toMatchObject({ success: true, credit_balance_cents: 49 });
      const failed = await client.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'absent' } });
      expect(toolJson(failed)).toMatchObject({ code: 'not_found' });
      await client.close();
      expect(await exited).toBe(0);
      const res = await server.request('GET', '/api/ac/memory', {
        key,
        query: { agent_key: key, memory_key: 'pg' },
      });
      expect(res.body).toMatchObject({
        memory: { memory_value: 'in the database' },
        credit_balance_cents: 48,
      });
      expect(await ledgerSum(server, key)).toBe(48);
    } finally {
      await server.close();
    }
  });

  it('exits 0 when stdin closes and on SIGTERM, with nothing but protocol on stdout', async () => {
    const run = (signal?: NodeJS.Signals) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, 'mcp'], {
          cwd: '/',
          env: { ...process.env, DATA_DIR: dataDir },
        });
        let stdout = '';
        child.stdout.on('data', (d) => {
          stdout += d;
          if (signal && stdout.includes('"id":1')) child.kill(signal);
          else if (!signal && stdout.includes('"id":1')) child.stdin.end();
        });
        child.on('exit', (code) => resolve({ code, stdout }));
        child.stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
        );
      });
    for (const outcome of [await run(), await run('SIGTERM')]) {
      expect(outcome.code).toBe(0);
      for (const line of outcome.stdout.trim().split('\n')) expect(JSON.parse(line).jsonrpc).toBe('2.0');
    }
    // The lock was released: the store opens again.
    const config = loadConfig({ DATA_DIR: dataDir, AC_LOG_LEVEL: 'silent' });
    const service = await openService(config, { command: 'test' });
    await service.close();
  });

  it('answers the calls still in flight when stdin closes, then exits 0', async () => {
    const { code, answers } = await sendAndClose(
      { DATA_DIR: dataDir },
      initializeAndCall('memory_store', { memory_key: 'last-words', memory_value: 'kept' }),
    );
    expect(code).toBe(0);
    const call = answers.find((a) => a.id === 2);
    expect(call?.result?.structuredContent).toMatchObject({
      success: true,
      memory: { memory_key: 'last-words' },
    });
  });
});

describe('a stdio server that cannot serve still answers, and says why in every result', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ac-stdio-unavailable-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  /** Connects, lists the tools, calls one and reads the account; returns the error body of the call. */
  async function unavailable(env: Record<string, string>): Promise<{ body: any; stderr: string }> {
    const { client, stderr, exited } = await connectStdio(env);
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('memory_store');
    const result = await client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'a', memory_value: 'b' },
    });
    expect(result.isError).toBe(true);
    const body = toolJson(result);
    expect(body.code).toBe('unavailable');
    await expect(client.readResource({ uri: 'ac://account' })).rejects.toThrow(body.error);
    await client.close();
    expect(await exited).toBe(0);
    // No stack trace for a known condition: neither printed nor in a JSON log line's err.
    expect(stderr()).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(stderr()).not.toContain('"stack"');
    return { body, stderr: stderr() };
  }

  it('a data directory it cannot make', async () => {
    const file = path.join(root, 'a-file');
    await writeFile(file, '');
    const { body, stderr } = await unavailable({ DATA_DIR: path.join(file, 'store') });
    expect(body.error).toContain(`The data directory ${path.join(file, 'store')} cannot be used (ENOTDIR`);
    expect(body.error).toContain('Set DATA_DIR to a directory this user can write');
    expect(stderr).toContain('cannot serve');
  });

  it('a data directory that is a file', async () => {
    const file = path.join(root, 'just-a-file');
    await writeFile(file, '');
    const { body } = await unavailable({ DATA_DIR: file });
    expect(body.error).toContain(
      `The data directory ${file} cannot be used (EEXIST: it is a file, not a directory)`,
    );
    expect(body.error).toContain('Set DATA_DIR to a directory this user can write');
  });

  it('a damaged store', async () => {
    const dir = path.join(root, 'damaged');
    await mkdir(dir);
    await writeFile(path.join(dir, STORE_FILE), '{"format": "agent-context/1", "accounts": [');
    const { body } = await unavailable({ DATA_DIR: dir });
    expect(body.error).toContain(`${path.join(dir, STORE_FILE)} could not be read as JSON`);
    expect(body.error).toContain('restore it from a backup');
  });

  it('a damaged local-agent.json (never a silent new agent)', async () => {
    const dir = path.join(root, 'damaged-agent');
    await mkdir(dir);
    await writeFile(path.join(dir, LOCAL_AGENT_FILE), '{"agent_key": "ac_');
    const { body } = await unavailable({ DATA_DIR: dir });
    expect(body.error).toContain(`${path.join(dir, LOCAL_AGENT_FILE)} is damaged`);
    expect(body.error).toContain('move it aside to start a new local agent');
  });

  it('a key this store does not know', async () => {
    const dir = path.join(root, 'unknown-key');
    const { body } = await unavailable({ DATA_DIR: dir, AC_API_KEY: 'ac_not-a-key-of-this-store' });
    expect(body.error).toContain(`AC_API_KEY is not a key of the store in ${dir}`);
  });

  it('a bad setting in the environment', async () => {
    const { body } = await unavailable({ DATA_DIR: path.join(root, 'bad-setting'), AC_LOG_LEVEL: 'loud' });
    expect(body.error).toContain('Invalid configuration');
    expect(body.error).toContain('AC_LOG_LEVEL="loud"');
  });

  it('a store another stdio server holds', async () => {
    const dir = path.join(root, 'held');
    const holder = await connectStdio({ DATA_DIR: dir });
    // A 2026-07-28 client connects without a word to the process: one call, so that it has opened the store.
    await holder.client.callTool({ name: 'account_info', arguments: {} });
    try {
      const { body } = await unavailable({ DATA_DIR: dir });
      expect(body.error).toContain(`is in use by agent-context mcp (pid ${holder.transport.pid}`);
      expect(body.error).toContain('start "agent-context serve" before your MCP clients');
    } finally {
      await holder.client.close();
    }
  });
});
