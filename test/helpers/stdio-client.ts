/** Starts `agent-context mcp` from dist/ as a desktop client does (a child process on stdio) and connects the SDK client. */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type McpClient, type McpEra, newClient, stdioTransport, TEST_ERA } from './mcp-era.js';
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
