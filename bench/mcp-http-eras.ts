/**
 * `npm run bench:mcp-http`: /mcp over HTTP in both protocol eras, memory_retrieve as a tool call under
 * autocannon load, alternating the eras for BENCH_ROUNDS rounds (default 3) in one run, on a fresh JSON store
 * with a few agents. Prints each round's calls/s and p99 per era and the ratio 2026-07-28 ÷ 2025-11-25 (issue
 * 28's goal: at least 0.9). `npm run bench` measures the same pair on its large store.
 */

import { type HttpResult, load, MCP_ERAS, mcpRetrieveRequests } from './http-load.js';
import { cleanupAll, LISTENING, makeTempDir, spawnWithLog } from './lifecycle.js';
import type { BenchAgent } from './prefill.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

const ADMIN_TOKEN = 'bench-admin-token-0123456789';

async function post(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ agent_key?: string }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { agent_key?: string };
}

async function main(): Promise<void> {
  const { dir } = await makeTempDir('mcp-http');
  const server = spawnWithLog({
    name: 'agent-context serve',
    args: ['dist/cli.js', 'serve'],
    env: {
      PATH: process.env.PATH,
      DATA_DIR: dir,
      PORT: '0',
      AC_RATE_LIMIT: 'off',
      AC_ADMIN_TOKEN: ADMIN_TOKEN,
      NODE_ENV: 'production',
    },
    logFile: `${dir}.log`,
    readyPattern: LISTENING,
  });
  const { match } = await server.ready;
  const url = match[1] as string;
  const agents: BenchAgent[] = [];
  for (let a = 0; a < 8; a++) {
    const email = `bench${a}@example.com`;
    const key = (await post(url, '/api/ac/register', { email })).agent_key as string;
    await post(
      url,
      '/api/ac/admin/plan',
      { email, plan: 'unlimited' },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    );
    const memoryKeys: string[] = [];
    for (let m = 0; m < 5; m++) {
      const memoryKey = `note.${m}`;
      await post(
        url,
        '/api/ac/memory',
        { agent_key: key, memory_key: memoryKey, memory_value: `v${m}` },
        {
          'x-api-key': key,
        },
      );
      memoryKeys.push(memoryKey);
    }
    agents.push({ key, memoryKeys } as unknown as BenchAgent);
  }
  const settings = { seconds: SECONDS, warmupSeconds: WARMUP, connections: CONNECTIONS };
  const results: HttpResult[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? MCP_ERAS : [...MCP_ERAS].reverse();
    for (const revision of order) {
      const r = await load(
        `MCP HTTP memory_retrieve (${revision})`,
        url,
        mcpRetrieveRequests(agents, revision),
        settings,
        {
          round,
        },
      );
      results.push(r);
      console.log(
        `round ${round} ${revision}: ${r.opsPerSec.toFixed(0)} calls/s, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
      );
    }
  }
  for (let round = 1; round <= ROUNDS; round++) {
    const of = (rev: string) =>
      results.find((r) => r.round === round && r.scenario.includes(rev)) as HttpResult;
    console.log(
      `round ${round}: 2026-07-28 ÷ 2025-11-25 = ${(of('2026-07-28').opsPerSec / of('2025-11-25').opsPerSec).toFixed(3)}`,
    );
  }
  await server.stop();
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
