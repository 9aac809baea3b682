/**
 * One store, two ways in: `agent-context mcp` started beside a running `agent-context serve` on the same
 * DATA_DIR relays to the server's /mcp as the local agent; when the server stops it says so and exits 0,
 * and the next start opens the store directly.
 */
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_AGENT_FILE } from '../../src/store/json/json-file-store.js';
import { type FakeUpstream, startFakeUpstream } from '../fakes/fake-upstream.js';
import { FORECAST_PARIS, GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { spawnServe } from '../helpers/spawn-serve.js';
import { connectStdio, initializeAndCall, sendAndClose, toolJson } from '../helpers/stdio-client.js';
import { request } from '../helpers/test-server.js';

async function localKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, LOCAL_AGENT_FILE);
  for (let i = 0; i < 100; i++) {
    if (
      await access(file).then(
        () => true,
        () => false,
      )
    )
      return JSON.parse(await readFile(file, 'utf8')).agent_key;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('serve did not create the local agent');
}

describe('agent-context mcp beside a running server', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ac-bridge-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('relays to the server as the local agent; when the server stops it says so and exits 0; the next start opens the store', async () => {
    const dataDir = path.join(root, 'one');
    const server = await spawnServe({ DATA_DIR: dataDir });
    const key = await localKey(dataDir);

    const bridged = await connectStdio({ DATA_DIR: dataDir });
    const bridgedTools = (await bridged.client.listTools()).tools;
    expect(bridged.stderr()).toContain(`relaying to ${server.url}/mcp`);
    const stored = await bridged.client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'project', memory_value: 'apollo', memory_type: 'fact' },
    });
    expect(stored.structuredContent).toMatchObject({
      success: true,
      cost_cents: 1,
      credit_balance_cents: 50,
    });

    // The write landed in the server's store, under the local agent, visible over REST.
    const rest = await request(server.url, 'GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'project' },
    });
    expect(rest.status, rest.text).toBe(200);
    expect(rest.body.memory).toMatchObject({ memory_value: 'apollo', memory_type: 'fact' });
    const account = await request(server.url, 'GET', '/api/ac/account/transactions', { key });
    expect(account.body.transactions.slice(0, 2)).toMatchObject([
      { operation: 'memory_retrieve', cost_cents: 1, amount_cents: 0 },
      { operation: 'memory_store', cost_cents: 1, amount_cents: 0, plan: 'unlimited' },
    ]);

    // Errors, resources and prompts are the server's own.
    const missing = await bridged.client.callTool({
      name: 'memory_retrieve',
      arguments: { memory_key: 'nope' },
    });
    expect(missing.isError).toBe(true);
    expect(toolJson(missing)).toMatchObject({ code: 'not_found', memory_key: 'nope' });
    const bad = await bridged.client.callTool({ name: 'memory_store', arguments: { memory_key: 'x' } });
    expect(toolJson(bad)).toMatchObject({ code: 'invalid_input', field: 'memory_value' });
    const resource = await bridged.client.readResource({ uri: 'ac://account' });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ plan: 'unlimited' });
    const prompt = await bridged.client.getPrompt({ name: 'recall', arguments: { topic: 'apollo' } });
    expect(JSON.stringify(prompt.messages)).toContain('apollo');

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    // With nothing waiting, the bridge stays to answer the next call with why.
    const after = await bridged.client.callTool({
      name: 'memory_store',
      arguments: { memory_key: 'later', memory_value: 'x' },
    });
    expect(after.isError).toBe(true);
    const gone = toolJson(after);
    expect(gone.code).toBe('unavailable');
    expect(gone.error).toContain(`The agent-context server at ${server.url}`);
    expect(gone.error).toContain('has stopped (it no longer answers). This call was not done');
    expect(gone.error).toContain(`open the store in ${dataDir} directly`);
    expect(await bridged.exited).toBe(0);
    expect(bridged.stderr()).toContain('MCP bridge: the server is gone');
    expect(bridged.stderr()).not.toMatch(/"level":(50|60)/);
    expect(bridged.stderr()).not.toContain('"stack"'); // the server going away is a known condition

    // The client starts it again: it opens the store directly, with the same tools and the same agent.
    const direct = await connectStdio({ DATA_DIR: dataDir });
    expect((await direct.client.listTools()).tools).toEqual(bridgedTools);
    const got = await direct.client.callTool({
      name: 'memory_retrieve',
      arguments: { memory_key: 'project' },
    });
    expect(got.structuredContent).toMatchObject({ memory: { memory_value: 'apollo' } });
    const notThere = await direct.client.callTool({
      name: 'memory_retrieve',
      arguments: { memory_key: 'later' },
    });
    expect(toolJson(notThere).code).toBe('not_found');
    await direct.client.close();
    expect(await direct.exited).toBe(0);
  });

  it('relays both protocol eras: a 2026-07-28 client and a 2025 one see the same tools and the same store', async () => {
    const dataDir = path.join(root, 'eras');
    const server = await spawnServe({ DATA_DIR: dataDir });
    try {
      await localKey(dataDir);
      const legacy = await connectStdio({ DATA_DIR: dataDir }, { era: 'legacy' });
      const modern = await connectStdio({ DATA_DIR: dataDir }, { era: 'modern' });
      // The same tools; `execution.taskSupport` is the 2025 revision's (2026-07-28 moved tasks to an extension).
      const withoutTasks = ({ execution: _, ...tool }: Record<string, unknown>) => tool;
      expect((await modern.client.listTools()).tools).toEqual(
        (await legacy.client.listTools()).tools.map(withoutTasks),
      );
      expect(modern.stderr()).toContain(`relaying to ${server.url}/mcp`);
      const stored = await modern.client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'era', memory_value: '2026-07-28' },
      });
      expect(stored.structuredContent).toMatchObject({ success: true, cost_cents: 1 });
      const read = await legacy.client.callTool({
        name: 'memory_retrieve',
        arguments: { memory_key: 'era' },
      });
      expect(read.structuredContent).toMatchObject({ memory: { memory_value: '2026-07-28' } });
      const resource = await modern.client.readResource({ uri: 'ac://memory/era' });
      expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({
        memory: { memory_value: '2026-07-28' },
      });
      // A memory that does not exist: the 2026-07-28 code, relayed as the server answered it.
      await expect(modern.client.readResource({ uri: 'ac://memory/absent' })).rejects.toMatchObject({
        code: -32602,
      });
      for (const c of [legacy, modern]) {
        await c.client.close();
        expect(await c.exited).toBe(0);
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('answers the calls still in flight when stdin closes, then exits 0', async () => {
    const dataDir = path.join(root, 'closing');
    const server = await spawnServe({ DATA_DIR: dataDir });
    try {
      await localKey(dataDir);
      const { code, answers, stderr } = await sendAndClose(
        { DATA_DIR: dataDir },
        initializeAndCall('memory_store', { memory_key: 'bridged-last', memory_value: 'kept' }),
      );
      expect(stderr).toContain(`relaying to ${server.url}/mcp`);
      expect(code).toBe(0);
      const call = answers.find((a) => a.id === 2);
      expect(call?.result?.structuredContent).toMatchObject({ success: true });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('with AC_API_KEY relays as that agent', async () => {
    const dataDir = path.join(root, 'keyed');
    const server = await spawnServe({ DATA_DIR: dataDir });
    try {
      const reg = await request(server.url, 'POST', '/api/ac/register', {
        body: { email: 'bridge@example.com' },
      });
      const key = reg.body.agent_key as string;
      const bridged = await connectStdio({ DATA_DIR: dataDir, AC_API_KEY: key });
      const stored = await bridged.client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'k', memory_value: 'v' },
      });
      expect(stored.structuredContent).toMatchObject({ cost_cents: 1, credit_balance_cents: 49 });
      const account = await request(server.url, 'GET', '/api/ac/account', { key });
      expect(account.body).toMatchObject({ plan: 'pay-as-you-go', credit_balance_cents: 49 });
      await bridged.client.close();
      expect(await bridged.exited).toBe(0);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('a server killed while a call is in flight: the call is answered "may or may not have been done", the bridge exits 0', async () => {
    const upstream: FakeUpstream = await startFakeUpstream({
      '/v1/search': { json: GEOCODING_PARIS },
      '/v1/forecast': { json: FORECAST_PARIS, delayMs: 10_000 },
    });
    const dataDir = path.join(root, 'killed');
    const server = await spawnServe({
      DATA_DIR: dataDir,
      AC_OPEN_METEO_GEOCODING_URL: upstream.url,
      AC_OPEN_METEO_FORECAST_URL: upstream.url,
      AC_WEATHER_PROVIDERS: 'open-meteo',
      AC_UPSTREAM_TIMEOUT_MS: '20000',
    });
    try {
      await localKey(dataDir);
      const bridged = await connectStdio({ DATA_DIR: dataDir });
      const call = bridged.client.callTool(
        { name: 'data_fetch', arguments: { query_type: 'weather', query: 'Paris' } },
        undefined,
        { timeout: 30_000 },
      );
      for (let i = 0; i < 200 && !upstream.requests.some((r) => r.path === '/v1/forecast'); i++) {
        await new Promise((r) => setTimeout(r, 25));
      }
      server.child.kill('SIGKILL');
      const result = await call;
      expect(result.isError).toBe(true);
      const body = toolJson(result);
      expect(body.code).toBe('unavailable');
      expect(body.error).toContain('This call may or may not have been done');
      expect(await bridged.exited).toBe(0);
      expect(bridged.stderr()).not.toContain('"stack"');
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      await upstream.close();
    }
  });

  it("the server's refusals at the HTTP level (a 429) reach the client as the same error body, as a tool result", async () => {
    const dataDir = path.join(root, 'limited');
    const server = await spawnServe({
      DATA_DIR: dataDir,
      AC_RATE_LIMIT: 'on',
      AC_RATE_LIMIT_PER_KEY_PER_MINUTE: '6',
    });
    try {
      await localKey(dataDir);
      const bridged = await connectStdio({ DATA_DIR: dataDir });
      let refused: any;
      for (let i = 0; i < 10 && !refused; i++) {
        const result = await bridged.client.callTool({ name: 'account_info', arguments: {} });
        if (result.isError) refused = toolJson(result);
      }
      expect(refused).toMatchObject({ code: 'rate_limited' });
      expect(refused.error).toMatch(/try again|retry/i);
      await bridged.client.close();
      expect(await bridged.exited).toBe(0);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
