/**
 * memory_search over MCP (issue 15): the tool declares query, filter and cursor, and its answers (ranked,
 * filtered, paged) validate against its output schema in the SDK client, as REST's do.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { connectHttpClient, textJson } from './mcp-harness.js';

let server: TestServer;
let client: Client;

beforeAll(async () => {
  server = await startTestServer();
  const key = await server.register();
  client = (await connectHttpClient(server.url, { 'X-API-Key': key })).client;
});
afterAll(async () => {
  await client?.close().catch(() => undefined);
  await server.close();
});

const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });

describe('memory_search over MCP', () => {
  it('declares query, filter and cursor; ranks, filters and pages as REST does', async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'memory_search');
    expect(Object.keys(tool?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['memory_type', 'limit', 'query', 'filter', 'cursor']),
    );
    expect(tool?.description).toMatch(/next_cursor/);
    for (const [memory_key, memory_value, project] of [
      ['plan', 'Ship the search feature on Friday: the feature is done', 'apollo'],
      ['shopping', 'Buy a feature-length film', 'home'],
      ['todo', 'Write the release notes', 'apollo'],
    ]) {
      const stored = await call('memory_store', { memory_key, memory_value, metadata: { project } });
      expect(stored.isError).toBeFalsy();
    }
    const ranked = await call('memory_search', { query: 'features', limit: 1 });
    expect(ranked.isError, JSON.stringify(ranked.content)).toBeFalsy();
    const page = ranked.structuredContent as any;
    expect(page).toMatchObject({ count: 1, total: 2 });
    expect(page.memories[0]).toMatchObject({
      memory_key: 'plan',
      snippet: expect.stringContaining('**feature**'),
    });
    const next = await call('memory_search', { query: 'features', limit: 1, cursor: page.next_cursor });
    expect((next.structuredContent as any).memories.map((m: any) => m.memory_key)).toEqual(['shopping']);
    expect((next.structuredContent as any).next_cursor).toBeNull();
    const filtered = await call('memory_search', { filter: { metadata: { project: 'apollo' } } });
    expect((filtered.structuredContent as any).memories.map((m: any) => m.memory_key)).toEqual([
      'todo',
      'plan',
    ]);
    const bad = await call('memory_search', { cursor: page.next_cursor });
    expect(bad.isError).toBe(true);
    expect(textJson(bad)).toMatchObject({ code: 'invalid_input', field: 'cursor' });
  });
});
