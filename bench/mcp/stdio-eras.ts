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
import { BUILT_CLI } from '../shared/build.mjs';
import { makeTempDir, runMain } from '../shared/cleanup.js';
import { cpuSeconds, used } from '../shared/process-usage.js';
import { envNumber } from '../shared/settings.js';
import { connectStdio } from './mcp-stdio-client.js';
import { type McpResult, sequential } from './sequential-calls.js';

const SECONDS = envNumber('BENCH_SECONDS', 5, 0);
const WARMUP = envNumber('BENCH_WARMUP_SECONDS', 2, 0);
type Era = 'legacy' | 'modern';

interface Connection {
  /** The server's process id, for its CPU time. */
  pid: number | undefined;
  call(name: string, args: Record<string, unknown>): Promise<{ isError?: unknown; content?: unknown }>;
  ping(): Promise<{ isError?: unknown }>;
  prompt(): Promise<{ isError?: unknown }>;
  close(): Promise<void>;
}

async function connect(era: Era, dataDir: string): Promise<Connection> {
  const args = [
    // BENCH_SERVER_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR' profiles the server.
    ...(process.env.BENCH_SERVER_NODE_ARGS?.split(' ') ?? []),
    // BENCH_CLI=<path of a cli.js> measures another build (an older commit's, say) the same way.
    process.env.BENCH_CLI ?? BUILT_CLI,
    'mcp',
  ];
  // The default log level, what a desktop client runs with, unless BENCH_LOG_LEVEL sets AC_LOG_LEVEL.
  const env = {
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
    PATH: process.env.PATH ?? '',
    ...(process.env.BENCH_LOG_LEVEL ? { AC_LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
  };
  const { client, pid, close } = await connectStdio(
    `agent-context mcp (${era})`,
    process.execPath,
    args,
    env,
    era,
  );
  return {
    pid,
    call: (name, args) => client.callTool({ name, arguments: args }) as Promise<{ isError?: unknown }>,
    ping: () => client.ping() as Promise<{ isError?: unknown }>,
    prompt: () =>
      client.getPrompt({ name: 'recall', arguments: { topic: 'x' } }) as Promise<{ isError?: unknown }>,
    close,
  };
}

/** A phase's result with the CPU both sides spent per call over it (warm-up included), in µs. */
export interface EraResult extends McpResult {
  serverCpuUsPerCall: number;
  clientCpuUsPerCall: number;
}

async function phase(
  connection: Connection,
  scenario: string,
  call: () => Promise<{ isError?: unknown }>,
): Promise<EraResult> {
  const ofServer = (pid: number) => pid === connection.pid;
  const server = cpuSeconds(ofServer);
  const client = process.cpuUsage();
  let calls = 0;
  const result = await sequential(scenario, 1, 0, SECONDS, WARMUP, () => {
    calls++;
    return call();
  });
  const clientUsed = process.cpuUsage(client);
  return {
    ...result,
    serverCpuUsPerCall: (used(server, cpuSeconds(ofServer)) * 1e6) / calls,
    clientCpuUsPerCall: (clientUsed.user + clientUsed.system) / calls,
  };
}

async function benchEra(era: Era): Promise<EraResult[]> {
  const { dir, remove } = await makeTempDir(`mcp-${era}`);
  const connection = await connect(era, dir);
  const results: EraResult[] = [];
  const label = era === 'legacy' ? '2025-11-25' : '2026-07-28';
  // BENCH_PHASES=prompt,store (of ping, prompt, store, account) runs some phases only: for a profile.
  const wanted = (name: string) =>
    !process.env.BENCH_PHASES || process.env.BENCH_PHASES.split(',').includes(name);
  try {
    if (era === 'legacy' && wanted('ping')) {
      results.push(await phase(connection, `${label} ping (ceiling)`, () => connection.ping()));
    }
    if (wanted('prompt')) {
      results.push(await phase(connection, `${label} prompts/get (ceiling)`, () => connection.prompt()));
    }
    let n = 0;
    if (wanted('store'))
      results.push(
        await phase(connection, `${label} memory_store`, () => {
          const i = n++;
          const key = i % 2 === 0 ? `k${i}` : `k${i - 1}`;
          return connection.call('memory_store', {
            memory_key: key,
            memory_value: `value ${i}`,
            memory_type: 'context',
          });
        }),
      );
    if (wanted('account')) {
      results.push(
        await phase(connection, `${label} account_info`, () => connection.call('account_info', {})),
      );
    }
  } finally {
    await connection.close();
    await remove();
  }
  return results;
}

async function main(): Promise<void> {
  const all: EraResult[] = [];
  // BENCH_ERAS=modern (or legacy) runs one era only.
  const eras = (process.env.BENCH_ERAS?.split(',') ?? ['legacy', 'modern']) as Era[];
  for (const era of eras) all.push(...(await benchEra(era)));
  for (const r of all) console.log(JSON.stringify(r));
  console.log(
    '\n| phase | calls/s | p50 ms | p99 ms | server CPU µs/call | client CPU µs/call | errors |\n|---|---|---|---|---|---|---|',
  );
  for (const r of all) {
    console.log(
      `| ${r.scenario} | ${r.opsPerSec.toFixed(0)} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ` +
        `${r.serverCpuUsPerCall.toFixed(0)} | ${r.clientCpuUsPerCall.toFixed(0)} | ${r.errors} |`,
    );
  }
}

await runMain('bench:mcp-stdio', main);
