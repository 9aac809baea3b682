/**
 * `npm run bench:mcp-stdio`: a desktop client's path, one call at a time over stdio, in both protocol eras,
 * at the default log level (info), on a fresh JSON store with the local agent. Per era: sequential
 * `memory_store` (alternately a new key and an update) and `account_info` (writes nothing), and the same
 * pipe's ceiling in the same run: an MCP `ping` on the 2025 era, and on both a `prompts/get` (answered from
 * the table, touching no store; unlike the lists, which the v2 client caches by their hints). Issue 28's targets: memory_store >= 2,000 calls/s and account_info >= 4,000.
 *
 * BENCH_SECONDS (default 5) per phase after BENCH_WARMUP_SECONDS (default 2). Prints one JSON line per phase
 * and a table.
 */
import path from 'node:path';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { cleanupAll, defer, killPid, makeTempDir, ROOT } from './lifecycle.js';
import { type McpResult, sequential } from './mcp-stdio.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
type Era = 'legacy' | 'modern';

interface Connection {
  call(name: string, args: Record<string, unknown>): Promise<{ isError?: unknown; content?: unknown }>;
  ping(): Promise<{ isError?: unknown }>;
  prompt(): Promise<{ isError?: unknown }>;
  close(): Promise<void>;
}

async function connect(era: Era, dataDir: string): Promise<Connection> {
  const params = {
    command: process.execPath,
    // BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR' profiles the server.
    args: [
      ...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ') ?? []),
      path.join(ROOT, 'dist', 'cli.js'),
      'mcp',
    ],
    // The default log level: what a desktop client runs with.
    env: {
      DATA_DIR: dataDir,
      NODE_ENV: 'production',
      PATH: process.env.PATH ?? '',
    },
    cwd: ROOT,
    stderr: 'ignore' as const,
  };
  const info = { name: 'agent-context-bench', version: '1.0.0' };
  const client =
    era === 'legacy'
      ? new LegacyClient(info)
      : (new ModernClient(info, {
          versionNegotiation: { mode: { pin: '2026-07-28' } },
        }) as unknown as LegacyClient);
  const transport =
    era === 'legacy' ? new LegacyStdio(params) : (new ModernStdio(params) as unknown as LegacyStdio);
  await client.connect(transport);
  const pid = transport.pid ?? undefined;
  const close = defer(`${era} stdio`, async () => {
    await client.close().catch(() => undefined);
    await killPid(pid);
  });
  return {
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<{ isError?: unknown }>,
    ping: () => client.ping() as Promise<{ isError?: unknown }>,
    prompt: () =>
      client.getPrompt({ name: 'recall', arguments: { topic: 'x' } }) as Promise<{ isError?: unknown }>,
    close,
  };
}

async function benchEra(era: Era): Promise<McpResult[]> {
  const { dir, remove } = await makeTempDir(`mcp-${era}`);
  const connection = await connect(era, dir);
  const results: McpResult[] = [];
  const label = era === 'legacy' ? '2025-11-25' : '2026-07-28';
  try {
    if (era === 'legacy') {
      results.push(
        await sequential(`${label} ping (ceiling)`, 1, 0, SECONDS, WARMUP, () => connection.ping()),
      );
    }
    results.push(
      await sequential(`${label} prompts/get (ceiling)`, 1, 0, SECONDS, WARMUP, () => connection.prompt()),
    );
    let n = 0;
    results.push(
      await sequential(`${label} memory_store`, 1, 0, SECONDS, WARMUP, () => {
        const i = n++;
        const key = i % 2 === 0 ? `k${i}` : `k${i - 1}`;
        return connection.call('memory_store', {
          memory_key: key,
          memory_value: `value ${i}`,
          memory_type: 'context',
        });
      }),
    );
    results.push(
      await sequential(`${label} account_info`, 1, 0, SECONDS, WARMUP, () =>
        connection.call('account_info', {}),
      ),
    );
  } finally {
    await connection.close();
    await remove();
  }
  return results;
}

async function main(): Promise<void> {
  const all: McpResult[] = [];
  // BENCH_ERAS=modern (or legacy) runs one era only.
  const eras = (process.env.BENCH_ERAS?.split(',') ?? ['legacy', 'modern']) as Era[];
  for (const era of eras) all.push(...(await benchEra(era)));
  for (const r of all) console.log(JSON.stringify(r));
  console.log('\n| phase | calls/s | p50 ms | p99 ms | errors |\n|---|---|---|---|---|');
  for (const r of all) {
    console.log(
      `| ${r.scenario} | ${r.opsPerSec.toFixed(0)} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${r.errors} |`,
    );
  }
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
