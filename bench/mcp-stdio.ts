/**
 * MCP over stdio: the SDK client spawns a server and calls one tool at a time (sequentially), first for a
 * short warm-up, then for `seconds`. Also the agent-context scenario: `node dist/cli.js mcp` on a fresh
 * pre-filled store, with `memory_store` (half new keys, half updates) and `memory_retrieve`.
 */
import path from 'node:path';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { defer, killPid, ROOT, tail } from './lifecycle.js';
import type { BenchAgent } from './prefill.js';
import { memoryValue } from './prefill.js';

export interface McpResult {
  scenario: string;
  /** Which round (1..BENCH_ROUNDS); the peer is measured once, as round 1. */
  round: number;
  /** Size of the server's data when the phase started (memories, or graph entities). */
  size: number;
  opsPerSec: number;
  p50: number;
  p99: number;
  max: number;
  calls: number;
  errors: number;
  firstError?: string;
  seconds: number;
}

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

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

type CallOutcome = { [field: string]: unknown; isError?: unknown; content?: unknown };

function errorText(result: CallOutcome): string {
  const content = result.content as Array<{ type: string; text?: string }> | undefined;
  return content?.map((part) => part.text ?? '').join(' ') ?? 'isError';
}

/** Calls `call(i)` one after another for `seconds` (after `warmupSeconds` of the same) and times each. */
export async function sequential(
  scenario: string,
  round: number,
  size: number,
  seconds: number,
  warmupSeconds: number,
  call: (i: number) => Promise<CallOutcome>,
): Promise<McpResult> {
  let i = 0;
  const warmupUntil = performance.now() + warmupSeconds * 1000;
  while (performance.now() < warmupUntil) {
    const result = await call(i++);
    if (result.isError) throw new Error(`${scenario} failed during warm-up: ${errorText(result)}`);
  }
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const until = started + seconds * 1000;
  let now = started;
  while (now < until) {
    const before = now;
    let outcome: CallOutcome;
    try {
      outcome = await call(i++);
    } catch (err) {
      outcome = { isError: true, content: [{ type: 'text', text: (err as Error).message }] };
    }
    now = performance.now();
    latencies.push(now - before);
    if (outcome.isError) {
      errors++;
      firstError ??= errorText(outcome).slice(0, 300);
    }
  }
  const elapsed = (now - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    scenario,
    round,
    size,
    opsPerSec: (latencies.length - errors) / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? Number.NaN,
    calls: latencies.length,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    seconds: elapsed,
  };
}

/**
 * agent-context over stdio, acting as `agent` on a store of `memories`: sequential memory_store calls
 * (alternately a new key and an update), then memory_retrieve of random keys the agent holds. At the default
 * log level, as a desktop client runs it; in the given protocol era, whose scenario names end in `suffix`.
 */
export async function benchAgentContextStdio(opts: {
  dataDir: string;
  agent: BenchAgent;
  memories: number;
  seconds: number;
  warmupSeconds: number;
  rounds: number;
  era?: 'legacy' | 'modern';
  suffix?: string;
}): Promise<McpResult[]> {
  const suffix = opts.suffix ?? '';
  const connection = await connectStdio(
    'agent-context mcp',
    process.execPath,
    [path.join(ROOT, 'dist', 'cli.js'), 'mcp'],
    {
      DATA_DIR: opts.dataDir,
      AC_API_KEY: opts.agent.key,
      NODE_ENV: 'production',
      // One agent takes every call here, so new keys would pass the per-agent quota (10,000) within seconds.
      AC_MEMORIES_PER_AGENT: '10000000',
    },
    opts.era,
  );
  try {
    const keys = [...opts.agent.memoryKeys];
    const existing = () => keys[Math.floor(Math.random() * keys.length)] as string;
    const results: McpResult[] = [];
    let i = 0;
    for (let round = 1; round <= opts.rounds; round++) {
      results.push(
        await sequential(
          `MCP stdio memory_store${suffix}`,
          round,
          opts.memories + keys.length - opts.agent.memoryKeys.length,
          opts.seconds,
          opts.warmupSeconds,
          async () => {
            const n = i++;
            const key = n % 2 === 0 ? `mcp.new.${n}` : existing();
            const result = await connection.client.callTool({
              name: 'memory_store',
              arguments: { memory_key: key, memory_value: memoryValue(`mcp.${n}`), memory_type: 'context' },
            });
            if (!result.isError && n % 2 === 0) keys.push(key);
            return result;
          },
        ),
      );
      results.push(
        await sequential(
          `MCP stdio memory_retrieve${suffix}`,
          round,
          opts.memories + keys.length - opts.agent.memoryKeys.length,
          opts.seconds,
          opts.warmupSeconds,
          () =>
            connection.client.callTool({ name: 'memory_retrieve', arguments: { memory_key: existing() } }),
        ),
      );
    }
    return results;
  } catch (err) {
    throw new Error(`${(err as Error).message}\nserver stderr:\n${tail(connection.stderr())}`);
  } finally {
    await connection.close();
  }
}
