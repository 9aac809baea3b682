/**
 * Which MCP protocol era the MCP tests speak: the 2025 revisions through the SDK's v1 client (the default,
 * what most desktop clients still are), or 2026-07-28 through the v2 client pinned to it
 * (`AC_TEST_MCP_ERA=modern`, `npm run test:mcp-modern`). The same tests run under both: both eras must get the
 * same tools, resources, answers and charges. The client is typed as the v1 one: the calls the tests make
 * have the same shapes in both.
 */

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttp,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttp } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport as LegacyTransport } from '@modelcontextprotocol/sdk/shared/transport.js';

export type McpEra = 'legacy' | 'modern';
export const MODERN_REVISION = '2026-07-28';

export const TEST_ERA: McpEra = process.env.AC_TEST_MCP_ERA === 'modern' ? 'modern' : 'legacy';

/** The client the tests use, whichever era it speaks. */
export type McpClient = LegacyClient;

export interface ClientOptions {
  era?: McpEra;
  name?: string;
  /** Declare the form elicitation capability (the test installs a handler where it answers). */
  elicitation?: boolean;
}

/** A new, unconnected client of the era. */
export function newClient(options: ClientOptions = {}): McpClient {
  const era = options.era ?? TEST_ERA;
  const info = { name: options.name ?? 'test', version: '1.0.0' };
  const capabilities = options.elicitation ? { elicitation: { form: {} } } : {};
  if (era === 'legacy') return new LegacyClient(info, { capabilities });
  return new ModernClient(info, {
    capabilities,
    versionNegotiation: { mode: { pin: MODERN_REVISION } },
  }) as unknown as McpClient;
}

/** A Streamable HTTP client transport to `url` sending `headers`, of the era's SDK line. */
export function httpTransport(
  url: URL,
  headers: Record<string, string> = {},
  options: { era?: McpEra; fetch?: typeof fetch } = {},
): LegacyTransport {
  const era = options.era ?? TEST_ERA;
  const init = { requestInit: { headers }, ...(options.fetch ? { fetch: options.fetch } : {}) };
  if (era === 'legacy') return new LegacyHttp(url, init);
  return new ModernHttp(url, init) as unknown as LegacyTransport;
}

export interface StdioParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

/** A stdio client transport that starts the server, of the era's SDK line, with stderr piped. */
export function stdioTransport(params: StdioParams, era: McpEra = TEST_ERA): LegacyStdio {
  if (era === 'legacy') return new LegacyStdio({ ...params, stderr: 'pipe' });
  return new ModernStdio({ ...params, stderr: 'pipe' }) as unknown as LegacyStdio;
}
