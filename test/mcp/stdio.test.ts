/** MCP over real stdio, spawning the built server exactly as mcp.json describes it. */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openService } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { LOCAL_AGENT_FILE } from '../../src/mcp/local-agent.js';
import { FakeLiveSource } from '../helpers/fake-live-source.js';
import { startTestServer } from '../helpers/test-server.js';

interface StdioEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

const ROOT = path.resolve('.');

async function mcpJsonEntry(): Promise<StdioEntry> {
  const config = JSON.parse(await readFile(path.join(ROOT, 'mcp.json'), 'utf8'));
  return config.mcpServers['agent-context'];
}

async function connectStdio(env: Record<string, string>) {
  const entry = await mcpJsonEntry();
  const transport = new StdioClientTransport({
    command: entry.command === 'node' ? process.execPath : entry.command,
    args: entry.args,
    env: { ...entry.env, ...env },
    cwd: ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

async function exited(pid: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`process ${pid} did not exit`);
}

describe('MCP over stdio', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'ac-stdio-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('without AC_API_KEY uses a local agent created once, its key kept in DATA_DIR and never printed', async () => {
    const first = await connectStdio({ DATA_DIR: dataDir });
    const stored = await first.client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'hello', memory_value: 'world' },
    });
    expect(stored.structuredContent).toMatchObject({ success: true, credit_balance_cents: 49 });
    const pid = first.transport.pid as number;
    await first.client.close();
    await exited(pid);

    const saved = JSON.parse(await readFile(path.join(dataDir, LOCAL_AGENT_FILE), 'utf8'));
    expect(saved.agent_key).toMatch(/^ac_/);
    expect((await stat(path.join(dataDir, LOCAL_AGENT_FILE))).mode & 0o777).toBe(0o600);
    expect(first.stderr()).not.toContain(saved.agent_key);

    const second = await connectStdio({ DATA_DIR: dataDir });
    const got = await second.client.callTool({ name: 'memory_retrieve', arguments: { memory_key: 'hello' } });
    expect(got.structuredContent).toMatchObject({
      memory: { memory_value: 'world' },
      credit_balance_cents: 48,
    });
    await second.client.close();
    await exited(second.transport.pid as number);
  });

  it('with AC_API_KEY acts as that agent, paying from the balance REST shows', async () => {
    const config = loadConfig({ DATA_DIR: dataDir, AC_LOG_LEVEL: 'silent' });
    const service = await openService(config, { command: 'test', live: new FakeLiveSource() });
    const { agent_key: key } = await service.core.accounts.register({ email: 'stdio@example.com' });
    await service.close();

    const { client, transport } = await connectStdio({ DATA_DIR: dataDir, AC_API_KEY: key });
    await client.callTool({ name: 'memory_store', arguments: { memory_key: 'k', memory_value: 'v' } });
    const info = await client.callTool({ name: 'account_info', arguments: {} });
    expect(info.structuredContent).toMatchObject({ email: 'stdio@example.com', credit_balance_cents: 49 });
    await client.close();
    await exited(transport.pid as number);

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

  it('refuses to run beside a server on the same DATA_DIR, naming its /mcp endpoint', async () => {
    const server = await startTestServer({ dataDir, live: new FakeLiveSource() });
    try {
      const entry = await mcpJsonEntry();
      const child = spawn(process.execPath, entry.args, {
        cwd: ROOT,
        env: { ...process.env, DATA_DIR: dataDir },
      });
      let stderr = '';
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const code = await new Promise((r) => child.on('exit', r));
      expect(code).toBe(1);
      expect(stderr).toContain(`${server.url}/mcp`);
      expect(stderr).toContain('X-API-Key');
    } finally {
      await server.stop();
    }
  });

  it('exits 0 when stdin closes and on SIGTERM, with nothing but protocol on stdout', async () => {
    const entry = await mcpJsonEntry();
    const run = (signal?: NodeJS.Signals) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, entry.args, {
          cwd: ROOT,
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
});
