/** Starts `agent-context mcp` from dist/ as a desktop client does (a child process on stdio) and connects the SDK client. */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type McpClient, type McpEra, newClient, stdioTransport, TEST_ERA } from './mcp-era.js';
import { runProcess } from './run-process.js';
import { CLI } from './spawn-serve.js';

export interface StdioConnection {
  client: McpClient;
  transport: StdioClientTransport;
  stderr(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

export async function connectStdio(
  env: Record<string, string>,
  options: { cwd?: string; command?: string; args?: string[]; era?: McpEra } = {},
): Promise<StdioConnection> {
  const era = options.era ?? TEST_ERA;
  const transport = stdioTransport(
    {
      command: options.command ?? process.execPath,
      args: options.args ?? [CLI, 'mcp'],
      env: { AC_LOG_FORMAT: 'json', ...env },
      cwd: options.cwd ?? path.parse(process.cwd()).root,
    },
    era,
  );
  let stderr = '';
  transport.stderr?.on('data', (d) => {
    stderr += d;
  });
  const client = newClient({ era, name: 'stdio-test' });
  await client.connect(transport);
  // The transport keeps its child process private (both SDK lines); the exit code is what these tests check.
  const child = (transport as unknown as { _process?: ChildProcess })._process;
  if (!child) throw new Error('StdioClientTransport no longer exposes _process: update this helper');
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  return { client, transport, stderr: () => stderr, exited };
}

/** The JSON body in a tool result's text content. */
export function toolJson(result: unknown): any {
  const content = (result as { content: { type: string; text: string }[] }).content;
  return JSON.parse(content[0]?.text ?? 'null');
}

/**
 * Starts `agent-context mcp` raw, writes `messages` (JSON-RPC lines) and ends stdin in the same tick, as a
 * client that sends its last request and closes; resolves with the exit code and every line it answered.
 */
export async function sendAndClose(
  env: Record<string, string>,
  messages: unknown[],
): Promise<{ code: number | null; answers: any[]; stderr: string }> {
  const input = messages.map((m) => `${JSON.stringify(m)}\n`).join('');
  const { code, stdout, stderr } = await runProcess(
    process.execPath,
    [CLI, 'mcp'],
    { ...process.env, ...env },
    {
      input,
      cwd: '/',
    },
  );
  const answers = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  return { code, answers, stderr };
}

/** An initialize, its notification and one tool call, as a 2025 client sends them. */
export function initializeAndCall(name: string, args: Record<string, unknown>, id = 2): unknown[] {
  return [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } },
  ];
}
