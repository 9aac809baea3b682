/**
 * Memory versions over MCP (issue 15): memory_store's expected_version and create_only, memory_delete's
 * expected_version, the same rules and the same error body as REST's If-Match / If-None-Match.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerSum, startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectHttpClient, textJson } from './mcp-harness.js';

let server: TestServer;
let client: Client;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = await server.register();
  client = (await connectHttpClient(server.url, { 'X-API-Key': key })).client;
});
afterAll(async () => {
  await client?.close().catch(() => undefined);
  await server.close();
});

const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

describe('memory versions over MCP', () => {
  it('the tools declare expected_version and create_only, and answer the version', async () => {
    const { tools } = await client.listTools();
    const store = tools.find((t) => t.name === 'memory_store');
    expect(Object.keys(store?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['expected_version', 'create_only']),
    );
    const del = tools.find((t) => t.name === 'memory_delete');
    expect(Object.keys(del?.inputSchema.properties ?? {})).toContain('expected_version');
    const first = await call('memory_store', { memory_key: 'notes', memory_value: 'one' });
    expect(first.structuredContent).toMatchObject({ created: true, memory: { version: 1 } });
  });

  it('expected_version: the current one writes, an old one is a version_conflict error that costs nothing', async () => {
    const ok = await call('memory_store', { memory_key: 'notes', memory_value: 'two', expected_version: 1 });
    expect(ok.isError).toBeFalsy();
    expect(ok.structuredContent).toMatchObject({ memory: { memory_value: 'two', version: 2 } });
    const spent = await ledgerSum(server, key);
    const stale = await call('memory_store', {
      memory_key: 'notes',
      memory_value: 'lost',
      expected_version: 1,
    });
    expect(stale.isError).toBe(true);
    expect(textJson(stale)).toMatchObject({
      code: 'version_conflict',
      current_version: 2,
      expected_version: 1,
    });
    expect(await ledgerSum(server, key)).toBe(spent);
    const read = await call('memory_retrieve', { memory_key: 'notes' });
    expect(read.structuredContent).toMatchObject({ memory: { memory_value: 'two', version: 2 } });
  });

  it('create_only refuses an existing key; delete with an old expected_version keeps the memory', async () => {
    const again = await call('memory_store', { memory_key: 'notes', memory_value: 'x', create_only: true });
    expect(textJson(again)).toMatchObject({ code: 'version_conflict', current_version: 2 });
    const del = await call('memory_delete', { memory_key: 'notes', expected_version: 1 });
    expect(textJson(del)).toMatchObject({ code: 'version_conflict', current_version: 2 });
    expect((await call('memory_delete', { memory_key: 'notes', expected_version: 2 })).isError).toBeFalsy();
    expect(textJson(await call('memory_retrieve', { memory_key: 'notes' }))).toMatchObject({
      code: 'not_found',
    });
  });

  it('ttl_seconds on store and refresh_on_read (a boolean) on retrieve', async () => {
    const stored = await call('memory_store', { memory_key: 'brief', memory_value: 'v', ttl_seconds: 3600 });
    const expiresAt = (stored.structuredContent as { memory: { expires_at: string } }).memory.expires_at;
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(3_500_000);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const read = await call('memory_retrieve', { memory_key: 'brief', refresh_on_read: true });
    expect(read.isError).toBeFalsy();
    const refreshed = (read.structuredContent as { memory: { expires_at: string; version: number } }).memory;
    expect(refreshed.version).toBe(1);
    expect(Date.parse(refreshed.expires_at)).toBeGreaterThan(Date.parse(expiresAt));
  });

  it('memory_history lists the versions and the delete; memory_restore undoes the delete', async () => {
    await call('memory_store', { memory_key: 'hist', memory_value: 'first' });
    await call('memory_store', { memory_key: 'hist', memory_value: 'second' });
    await call('memory_delete', { memory_key: 'hist' });
    const listed = await call('memory_history', { memory_key: 'hist' });
    expect(listed.isError).toBeFalsy();
    expect(listed.structuredContent).toMatchObject({
      current_version: null,
      versions: [
        { version: 3, deleted: true },
        { version: 2, memory_value: 'second' },
        { version: 1, memory_value: 'first' },
      ],
    });
    const restored = await call('memory_restore', { memory_key: 'hist', version: 1 });
    expect(restored.structuredContent).toMatchObject({
      created: true,
      restored_from: 1,
      memory: { memory_value: 'first', version: 4 },
    });
    expect(textJson(await call('memory_restore', { memory_key: 'hist', version: 3 }))).toMatchObject({
      code: 'invalid_input',
      field: 'version',
    });
  });

  it('memory_store_batch stores all or nothing, at 1 cent per memory', async () => {
    const spent = await ledgerSum(server, key);
    const ok = await call('memory_store_batch', {
      memories: [
        { memory_key: 'b1', memory_value: 'one' },
        { memory_key: 'b2', memory_value: 'two', memory_type: 'fact' },
      ],
    });
    expect(ok.structuredContent).toMatchObject({ count: 2, cost_cents: 2 });
    expect(await ledgerSum(server, key)).toBe(spent - 2);
    const refused = await call('memory_store_batch', {
      memories: [
        { memory_key: 'b3', memory_value: 'three' },
        { memory_key: 'b1', memory_value: 'x', create_only: true },
      ],
    });
    expect(textJson(refused)).toMatchObject({ code: 'version_conflict', memory_key: 'b1' });
    expect(textJson(await call('memory_retrieve', { memory_key: 'b3' }))).toMatchObject({
      code: 'not_found',
    });
    expect(await ledgerSum(server, key)).toBe(spent - 2);
  });

  it('a wrong argument is the REST 400 body, naming it', async () => {
    const bad = await call('memory_store', { memory_key: 'n', memory_value: 'v', expected_version: 0 });
    expect(textJson(bad)).toMatchObject({ code: 'invalid_input', field: 'expected_version' });
    const both = await call('memory_store', {
      memory_key: 'n',
      memory_value: 'v',
      expected_version: 1,
      create_only: true,
    });
    expect(textJson(both)).toMatchObject({ code: 'invalid_input', field: 'create_only' });
  });
});
