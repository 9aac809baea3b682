/**
 * The agent-context scenario over stdio: `node dist/cli.js mcp` on a fresh pre-filled store, with `memory_store`
 * (half new keys, half updates) and `memory_retrieve`, called one at a time.
 */
import { BUILT_CLI } from '../shared/build.mjs';
import { type BenchAgent, memoryValue } from '../shared/prefill.js';
import { tail } from '../shared/processes.js';
import { pick } from '../shared/random.js';
import { connectStdio } from './mcp-stdio-client.js';
import { type CallOutcome, type McpResult, sequential } from './sequential-calls.js';

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
    [BUILT_CLI, 'mcp'],
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
    const existing = () => pick(keys);
    /** A tool's calls in a round, on the store as it is when the phase starts. */
    const phase = (tool: string, round: number, call: (i: number) => Promise<CallOutcome>) =>
      sequential(
        `MCP stdio ${tool}${suffix}`,
        round,
        opts.memories + keys.length - opts.agent.memoryKeys.length,
        opts.seconds,
        opts.warmupSeconds,
        call,
      );
    const callTool = (name: string, args: Record<string, unknown>) =>
      connection.client.callTool({ name, arguments: args });
    const results: McpResult[] = [];
    let i = 0;
    for (let round = 1; round <= opts.rounds; round++) {
      results.push(
        await phase('memory_store', round, async () => {
          const n = i++;
          const key = n % 2 === 0 ? `mcp.new.${n}` : existing();
          const result = await callTool('memory_store', {
            memory_key: key,
            memory_value: memoryValue(`mcp.${n}`),
            memory_type: 'context',
          });
          if (!result.isError && n % 2 === 0) keys.push(key);
          return result;
        }),
      );
      results.push(
        await phase('memory_retrieve', round, () => callTool('memory_retrieve', { memory_key: existing() })),
      );
    }
    return results;
  } catch (err) {
    throw new Error(`${(err as Error).message}\nserver stderr:\n${tail(connection.stderr())}`);
  } finally {
    await connection.close();
  }
}
