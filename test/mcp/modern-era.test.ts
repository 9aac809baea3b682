/**
 * What a 2026-07-28 client gets on /mcp that a 2025 one does not, on the wire (raw HTTP, so that each header
 * and field is checked as sent) and through the v2 client: server/discover, the revision's error codes, a
 * resultType and serverInfo on every result, true cache hints, a deterministic tools/list, logs only for a
 * request that asks, resource-not-found as -32602, and confirmation of destructive calls by input_required.
 * Runs on the store the run names (AC_TEST_STORE), whatever TEST_ERA is: this is the 2026-07-28 era's own.
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { MODERN_REVISION } from '../helpers/mcp-era.js';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectHttpClient, textJson } from './mcp-harness.js';

const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

interface Rpc {
  status: number;
  headers: Headers;
  /** The answer: the JSON body, or the last message of an SSE stream. */
  json: any;
  /** Every JSON-RPC message of the answer, in order (one for a JSON body). */
  messages: any[];
}

describe('MCP 2026-07-28 on /mcp', () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
    key = await server.register();
  });
  afterAll(() => server.close());

  /** POSTs `body` (text) to /mcp with the 2026-07-28 version header and `headers`, as sent: for what rpc() fixes. */
  function rawPost(headers: Record<string, string>, body: string): Promise<Response> {
    return fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN_REVISION,
        ...headers,
      },
      body,
    });
  }

  interface Options {
    headers?: Record<string, string>;
    meta?: Record<string, unknown>;
    capabilities?: Record<string, unknown>;
    key?: string | null;
    id?: number;
  }

  /** One 2026-07-28 request as a conforming client sends it, with what `options` changes. */
  async function rpc(
    method: string,
    params: Record<string, unknown> = {},
    options: Options = {},
  ): Promise<Rpc> {
    const name = (params.name ?? params.uri) as string | undefined;
    const body = {
      jsonrpc: '2.0',
      id: options.id ?? 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
          'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          ...options.meta,
        },
      },
    };
    const callerKey = options.key === undefined ? key : options.key;
    const res = await rawPost(
      {
        'mcp-method': method,
        ...(name ? { 'mcp-name': name } : {}),
        ...(callerKey ? { 'x-api-key': callerKey } : {}),
        ...options.headers,
      },
      JSON.stringify(body),
    );
    const text = await res.text();
    const messages = res.headers.get('content-type')?.startsWith('text/event-stream')
      ? [...text.matchAll(/^data: (.*)$/gmu)].map((m) => JSON.parse(m[1] as string))
      : [JSON.parse(text || 'null')];
    return { status: res.status, headers: res.headers, json: messages.at(-1), messages };
  }

  it('answers server/discover with the revisions, capabilities and identity, cacheable for an hour', async () => {
    const res = await rpc('server/discover', {}, { key: null });
    expect(res.status).toBe(200);
    expect(res.json.result).toMatchObject({
      supportedVersions: [MODERN_REVISION],
      capabilities: { tools: {}, resources: {}, prompts: {}, logging: {} },
      resultType: 'complete',
      ttlMs: 3_600_000,
      cacheScope: 'public',
      _meta: { [SERVER_INFO]: { name: 'agent-context' } },
    });
    expect(res.json.result.instructions).toMatch(/memory_store/u);
  });

  it("answers with the revision's error codes: unsupported version, header mismatch, unknown method, no envelope", async () => {
    const unsupported = await rpc(
      'tools/list',
      {},
      {
        headers: { 'mcp-protocol-version': '2099-01-01' },
        meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
      },
    );
    expect(unsupported.status).toBe(400);
    expect(unsupported.json.error.code).toBe(-32022);
    expect(unsupported.json.error.data.supported).toContain(MODERN_REVISION);

    const method = await rpc('tools/list', {}, { headers: { 'mcp-method': 'prompts/list' } });
    expect(method.status).toBe(400);
    expect(method.json.error.code).toBe(-32020);
    const name = await rpc(
      'tools/call',
      { name: 'account_info', arguments: {} },
      { headers: { 'mcp-name': 'memory_delete' } },
    );
    expect(name.status).toBe(400);
    expect(name.json.error.code).toBe(-32020);
    const noName = await rawPost(
      { 'mcp-method': 'tools/call', 'x-api-key': key },
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'account_info',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN_REVISION,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
    );
    expect(noName.status).toBe(400);
    expect(((await noName.json()) as any).error.code).toBe(-32020);

    const unknown = await rpc('memories/everything');
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe(-32601);

    const noEnvelope = await rawPost(
      { 'mcp-method': 'tools/list' },
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    );
    expect(noEnvelope.status).toBe(400);
    expect(((await noEnvelope.json()) as any).error.code).toBe(-32602);
    // A charged call refused the same way runs nothing: no memory, no charge.
    const store = { name: 'memory_store', arguments: { memory_key: 'refused', memory_value: 'v' } };
    const mismatch = await rpc('tools/call', store, { headers: { 'mcp-name': 'account_info' } });
    expect(mismatch.json.error.code).toBe(-32020);
    const wrongVersion = await rpc('tools/call', store, {
      headers: { 'mcp-protocol-version': '2099-01-01' },
      meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
    });
    expect(wrongVersion.json.error.code).toBe(-32022);
    expect(await ledgerSum(server, key)).toBe(50);
    const absent = await rpc('tools/call', { name: 'memory_retrieve', arguments: { memory_key: 'refused' } });
    expect(textJson(absent.json.result)).toMatchObject({ code: 'not_found' });
  });

  it('puts resultType and serverInfo on every result, and serves a request without clientInfo', async () => {
    const call = await rpc('tools/call', { name: 'account_info', arguments: {} });
    expect(call.json.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { credit_balance_cents: 50 },
      _meta: { [SERVER_INFO]: { name: 'agent-context', version: expect.any(String) } },
    });
    const anonymous = await rpc(
      'tools/list',
      {},
      { meta: { 'io.modelcontextprotocol/clientInfo': undefined } },
    );
    expect(anonymous.json.result.resultType).toBe('complete');
  });

  it("gives true cache hints: the table public for an hour, the agent's own data private and never reused", async () => {
    const hint = async (method: string, params: Record<string, unknown> = {}) => {
      const { result } = (await rpc(method, params)).json;
      return { ttlMs: result.ttlMs, cacheScope: result.cacheScope };
    };
    const table = { ttlMs: 3_600_000, cacheScope: 'public' };
    const own = { ttlMs: 0, cacheScope: 'private' };
    expect(await hint('tools/list')).toEqual(table);
    expect(await hint('prompts/list')).toEqual(table);
    expect(await hint('resources/templates/list')).toEqual(table);
    expect(await hint('resources/list')).toEqual(own);
    expect(await hint('resources/read', { uri: 'ac://account' })).toEqual(own);
    expect(await hint('resources/read', { uri: 'ac://usage' })).toEqual(own);
    expect(await hint('resources/read', { uri: 'ac://memories.ndjson' })).toEqual(own);
  });

  it("lists the tools in the same order every time: the operation table's", async () => {
    const names = async () =>
      (await rpc('tools/list')).json.result.tools.map((t: { name: string }) => t.name) as string[];
    const first = await names();
    expect(await names()).toEqual(first);
    const table = server.running.service.operations.flatMap((op) => (op.mcp ? [op.mcp.tool] : []));
    expect(first).toEqual(table);
  });

  it('sends log notifications only to a request that asks, at the level it asks', async () => {
    const quiet = await rpc('tools/call', { name: 'account_info', arguments: {} });
    expect(quiet.headers.get('content-type')).toMatch(/application\/json/u);
    expect(quiet.messages).toHaveLength(1);

    const asked = await rpc(
      'tools/call',
      { name: 'account_info', arguments: {} },
      { meta: { 'io.modelcontextprotocol/logLevel': 'info' } },
    );
    expect(asked.messages.map((m) => m.method ?? 'result')).toEqual(['notifications/message', 'result']);
    expect(asked.messages[0].params).toMatchObject({
      level: 'info',
      logger: 'agent-context',
      data: { tool: 'account_info', outcome: 'ok', cost_cents: 0 },
    });

    const above = await rpc(
      'tools/call',
      { name: 'account_info', arguments: {} },
      { meta: { 'io.modelcontextprotocol/logLevel': 'error' } },
    );
    expect(above.messages).toHaveLength(1);
    const failed = await rpc(
      'tools/call',
      { name: 'memory_retrieve', arguments: { memory_key: 'never' } },
      { meta: { 'io.modelcontextprotocol/logLevel': 'warning' } },
    );
    expect(failed.messages[0].params).toMatchObject({
      level: 'warning',
      data: { tool: 'memory_retrieve', outcome: 'not_found' },
    });
    expect(failed.json.result.isError).toBe(true);
  });

  it('arguments nested 100,000 deep: an isError result naming the field, not a stack overflow', async () => {
    const body = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"memory_store","arguments":{"memory_key":"k","memory_value":"v","metadata":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}},"_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN_REVISION}","io.modelcontextprotocol/clientCapabilities":{}}}}`;
    const res = await rawPost(
      { 'mcp-method': 'tools/call', 'mcp-name': 'memory_store', 'x-api-key': key },
      body,
    );
    expect(res.status).toBe(200);
    const answer = (await res.json()) as any;
    expect(answer.result.isError).toBe(true);
    expect(textJson(answer.result)).toMatchObject({ code: 'invalid_input', field: 'metadata' });
  });

  it('answers a memory that does not exist with -32602 (resource not found), the REST body as data', async () => {
    const res = await rpc('resources/read', { uri: 'ac://memory/never-stored' });
    expect(res.json.error).toMatchObject({
      code: -32602,
      data: { code: 'not_found', memory_key: 'never-stored' },
    });
    expect(res.json.error.message).toMatch(/never-stored/u);
    // The 2025 era keeps its code.
    const { client } = await connectHttpClient(server.url, { 'X-API-Key': key }, { era: 'legacy' });
    await expect(client.readResource({ uri: 'ac://memory/never-stored' })).rejects.toMatchObject({
      code: -32001,
    });
    await client.close();
  });

  describe('confirmation of destructive calls (input_required)', () => {
    const ELICITS = { elicitation: { form: {} } };
    let agent: string;

    beforeAll(async () => {
      agent = await server.register();
      for (const k of ['a', 'b', 'c']) {
        await rpc(
          'tools/call',
          { name: 'memory_store', arguments: { memory_key: k, memory_value: k } },
          { key: agent },
        );
      }
    });
    const balance = () => ledgerSum(server, agent);

    it('asks a client that can answer before deleting; nothing is done or charged until it says yes', async () => {
      const before = await balance();
      const asked = await rpc(
        'tools/call',
        { name: 'memory_delete', arguments: { memory_key: 'a' } },
        { key: agent, capabilities: ELICITS },
      );
      expect(asked.json.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: {
          confirm: {
            method: 'elicitation/create',
            params: { message: expect.stringMatching(/Delete the memory "a"/u) },
          },
        },
      });
      expect(await balance()).toBe(before);
      const still = await rpc(
        'tools/call',
        { name: 'memory_retrieve', arguments: { memory_key: 'a' } },
        { key: agent },
      );
      expect(still.json.result.structuredContent.memory.memory_value).toBe('a');

      const yes = await rpc(
        'tools/call',
        {
          name: 'memory_delete',
          arguments: { memory_key: 'a' },
          inputResponses: { confirm: { action: 'accept', content: { confirm: true } } },
        },
        { key: agent, capabilities: ELICITS },
      );
      expect(yes.json.result).toMatchObject({ resultType: 'complete', structuredContent: { success: true } });
      expect(yes.json.result.isError).toBeFalsy();
      expect(await balance()).toBe(before - 1); // the retrieve above (a delete is free)
    });

    it('a declined or cancelled confirmation, or confirm false, does nothing and charges nothing', async () => {
      const before = await balance();
      const line = `${JSON.stringify({ memory_key: 'b', memory_value: 'replaced' })}\n`;
      for (const answer of [
        { action: 'decline' },
        { action: 'cancel' },
        { action: 'accept', content: { confirm: false } },
      ]) {
        for (const call of [
          { name: 'memory_delete', arguments: { memory_key: 'b' } },
          { name: 'memory_import', arguments: { ndjson: line, policy: 'overwrite' } }, // charged if run
        ]) {
          const res = await rpc(
            'tools/call',
            { ...call, inputResponses: { confirm: answer } },
            { key: agent, capabilities: ELICITS },
          );
          expect(res.json.result.isError).toBe(true);
          expect(textJson(res.json.result)).toMatchObject({ code: 'conflict', declined: true });
        }
      }
      expect(await balance()).toBe(before);
      const kept = await rpc(
        'tools/call',
        { name: 'memory_retrieve', arguments: { memory_key: 'b' } },
        { key: agent },
      );
      expect(kept.json.result.structuredContent.memory.memory_value).toBe('b');
    });

    it('does not ask a client that can answer only URL elicitations: its call runs', async () => {
      const line = `${JSON.stringify({ memory_key: 'url-only', memory_value: 'v' })}\n`;
      const res = await rpc(
        'tools/call',
        { name: 'memory_import', arguments: { ndjson: line, policy: 'overwrite' } },
        { key: agent, capabilities: { elicitation: { url: {} } } },
      );
      expect(res.json.result).toMatchObject({ resultType: 'complete', structuredContent: { created: 1 } });
    });

    it('does not ask a client without elicitation, a dry run, or an import that replaces nothing', async () => {
      const before = await balance();
      const direct = await rpc(
        'tools/call',
        { name: 'memory_delete', arguments: { memory_key: 'c' } },
        { key: agent },
      );
      expect(direct.json.result).toMatchObject({
        resultType: 'complete',
        structuredContent: { success: true },
      });
      const line = `${JSON.stringify({ memory_key: 'b', memory_value: 'replaced' })}\n`;
      for (const args of [
        { ndjson: line, policy: 'skip' },
        { ndjson: line, policy: 'overwrite', dry_run: true },
      ]) {
        const res = await rpc(
          'tools/call',
          { name: 'memory_import', arguments: args },
          { key: agent, capabilities: ELICITS },
        );
        expect(res.json.result.resultType).toBe('complete');
      }
      const overwrite = await rpc(
        'tools/call',
        { name: 'memory_import', arguments: { ndjson: line, policy: 'overwrite' } },
        { key: agent, capabilities: ELICITS },
      );
      expect(overwrite.json.result.resultType).toBe('input_required');
      expect(overwrite.json.result.inputRequests.confirm.params.message).toMatch(/policy overwrite/u);
      const kept = await rpc(
        'tools/call',
        { name: 'memory_retrieve', arguments: { memory_key: 'b' } },
        { key: agent },
      );
      expect(kept.json.result.structuredContent.memory.memory_value).toBe('b');
      expect(await balance()).toBe(before - 1); // the retrieve: a delete, a skip and a dry run are free
    });

    it('through the v2 client: its elicitation handler is asked once, and the call completes with the answer', async () => {
      const questions: string[] = [];
      const client = new ModernClient(
        { name: 'confirming', version: '1' },
        { capabilities: ELICITS, versionNegotiation: { mode: { pin: MODERN_REVISION } } },
      );
      client.setRequestHandler('elicitation/create', async (request) => {
        questions.push((request.params as { message: string }).message);
        return { action: 'accept', content: { confirm: true } };
      });
      await client.connect(
        new ModernHttp(new URL(`${server.url}/mcp`), { requestInit: { headers: { 'X-API-Key': agent } } }),
      );
      const before = await balance();
      const line = `${JSON.stringify({ memory_key: 'b', memory_value: 'replaced' })}\n`;
      const res = await client.callTool({
        name: 'memory_import',
        arguments: { ndjson: line, policy: 'overwrite' },
      });
      expect(res.isError).toBeFalsy();
      expect(res.structuredContent).toMatchObject({ updated: 1 });
      expect(questions).toHaveLength(1);
      expect(await balance()).toBe(before - 1);
      await client.close();
    });

    it('a 2025 client that declares elicitation is not asked: its call runs as it always has', async () => {
      const { client } = await connectHttpClient(
        server.url,
        { 'X-API-Key': agent },
        { era: 'legacy', elicitation: true },
      );
      const res = await client.callTool({ name: 'memory_delete', arguments: { memory_key: 'b' } });
      expect(res.isError).toBeFalsy();
      expect(res.structuredContent).toMatchObject({ success: true });
      await client.close();
    });
  });
});
