/**
 * Moving memories over MCP (issue 15): memory_import as a tool (the NDJSON as its ndjson argument, priced per
 * memory written as on REST) and the export as the resource ac://memories.ndjson, the same text REST streams.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
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

describe('moving memories over MCP', () => {
  it('imports NDJSON with memory_import and reads the export back as ac://memories.ndjson', async () => {
    const ndjson =
      '{"memory_key": "b", "memory_value": "second", "memory_type": "fact"}\n' +
      '{"memory_key": "a", "memory_value": "first\\u0000 🙂", "metadata": {"n": 1}}\n';
    const dry = await client.callTool({ name: 'memory_import', arguments: { ndjson, dry_run: true } });
    expect(dry.structuredContent).toMatchObject({ dry_run: true, created: 2, price_cents: 2, cost_cents: 0 });
    const done = await client.callTool({ name: 'memory_import', arguments: { ndjson } });
    expect(done.isError, JSON.stringify(done.content)).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ created: 2, cost_cents: 2, credit_balance_cents: 48 });
    const bad = await client.callTool({ name: 'memory_import', arguments: { ndjson: '{"memory_key": ""}' } });
    expect(bad.isError).toBe(true);
    expect(textJson(bad)).toMatchObject({ code: 'invalid_input', field: 'ndjson' });

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain('ac://memories.ndjson');
    const read = await client.readResource({ uri: 'ac://memories.ndjson' });
    const [content] = read.contents as unknown as [{ mimeType: string; text: string }];
    expect(content.mimeType).toBe('application/x-ndjson');
    const rest = await (
      await fetch(`${server.url}/api/ac/memory/export`, { headers: { 'X-API-Key': key } })
    ).text();
    expect(content.text).toBe(rest);
    expect(
      content.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).memory_key),
    ).toEqual(['a', 'b']);
  });
});
