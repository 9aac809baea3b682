/**
 * An MCP client over stdio: the SDK's client spawns a server (agent-context's `mcp`, or the peer) and talks to it
 * in either protocol era; its process is registered for cleanup.
 */
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ROOT } from '../shared/build.mjs';
import { defer } from '../shared/cleanup.js';
import { killPid, tail } from '../shared/processes.js';

export interface McpConnection {
  client: Client;
  pid: number | undefined;
  stderr: () => string;
  close: () => Promise<void>;
}

/**
 * An SDK client over stdio to the server `command` starts: the v1 client (the 2025 era, `initialize`), or with
 * `era: 'modern'` the v2 client pinned to 2026-07-28 (typed as the v1 one: the calls the bench makes match).
 */
export async function connectStdio(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  era: 'legacy' | 'modern' = 'legacy',
): Promise<McpConnection> {
  const params = { command, args, env, cwd: ROOT, stderr: 'pipe' as const };
  const transport =
    era === 'legacy'
      ? new StdioClientTransport(params)
      : (new ModernStdio(params) as unknown as StdioClientTransport);
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
  });
  const info = { name: 'agent-context-bench', version: '1.0.0' };
  const client =
    era === 'legacy'
      ? new Client(info)
      : (new ModernClient(info, {
          versionNegotiation: { mode: { pin: '2026-07-28' } },
        }) as unknown as Client);
  let pid: number | undefined;
  const close = defer(`${name} over stdio`, async () => {
    await client.close().catch(() => undefined);
    await killPid(pid); // the transport gives up after SIGKILL without waiting; make sure
  });
  try {
    await client.connect(transport);
  } catch (err) {
    await close();
    throw new Error(`${name} over stdio did not start: ${(err as Error).message}\n${tail(stderr)}`);
  }
  pid = transport.pid ?? undefined;
  return { client, pid, stderr: () => stderr, close };
}
