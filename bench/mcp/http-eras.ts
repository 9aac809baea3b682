/**
 * `npm run bench:mcp-http`: /mcp over HTTP in both protocol eras, memory_retrieve as a tool call under
 * autocannon load, alternating the eras for BENCH_ROUNDS rounds (default 3) in one run, on a fresh JSON store
 * with a few agents. Prints each round's calls/s and p99 per era and the ratio 2026-07-28 ÷ 2025-11-25 (issue
 * 28's goal: at least 0.9). `npm run bench` measures the same pair on its large store.
 */

import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type HttpResult, load } from '../http/load.js';
import { MCP_ERAS, mcpRetrieveRequests } from '../http/requests.js';
import { BUILT_CLI } from '../shared/build.mjs';
import { makeTempDir, runMain } from '../shared/cleanup.js';
import type { BenchAgent } from '../shared/prefill.js';
import { spawnWithLog } from '../shared/processes.js';
import { BENCH_ADMIN_TOKEN, postJson, unlimitedAgent } from '../shared/rest-client.js';
import { envNumber } from '../shared/settings.js';
import { mcpHttpScenario } from '../suite/scenario-names.js';

const SECONDS = envNumber('BENCH_SECONDS', 8, 0);
const WARMUP = envNumber('BENCH_WARMUP_SECONDS', 2, 0);
const ROUNDS = envNumber('BENCH_ROUNDS', 3, 1);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 16, 1);

async function main(): Promise<void> {
  const { dir } = await makeTempDir('mcp-http');
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir);
  const server = spawnWithLog({
    name: 'agent-context serve',
    args: [BUILT_CLI, 'serve'],
    env: {
      PATH: process.env.PATH,
      DATA_DIR: dataDir,
      PORT: '0',
      AC_RATE_LIMIT: 'off',
      AC_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
      NODE_ENV: 'production',
    },
    logFile: path.join(dir, 'server.log'),
  });
  const { url } = await server.ready;
  const agents: BenchAgent[] = [];
  for (let a = 0; a < 8; a++) {
    const key = await unlimitedAgent(url, `bench${a}@example.com`);
    const memoryKeys: string[] = [];
    for (let m = 0; m < 5; m++) {
      const memoryKey = `note.${m}`;
      await postJson(
        url,
        '/api/ac/memory',
        { agent_key: key, memory_key: memoryKey, memory_value: `v${m}` },
        { 'x-api-key': key },
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
      const r = await load(mcpHttpScenario(revision), url, mcpRetrieveRequests(agents, revision), settings, {
        round,
      });
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

await runMain('bench:mcp-http', main);
