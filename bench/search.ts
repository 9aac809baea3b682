import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AutocannonRequest } from 'autocannon';
import { startFakeOpenMeteo } from './fake-upstream.js';
import { bareGetRequests, type HttpResult, type LoadSettings, load } from './http-load.js';
import {
  cleanupAll,
  defer,
  LISTENING,
  makeTempDir,
  minimalEnv,
  ROOT,
  spawnBenchServer,
  spawnWithLog,
} from './lifecycle.js';
import { type BenchAgent, generatePrefill, writeSnapshot } from './prefill.js';
import { median } from './report.js';
import { vocabulary } from './search-vocabulary.js';

const PER_AGENT = 10_000;
const WORDS_PER_VALUE = 30;

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
}

/** A word, rank r drawn with probability about 1/r (Zipf), as words are in text. */
function zipf(words: readonly string[]): string {
  const r = Math.floor(Math.exp(Math.random() * Math.log(words.length)));
  return words[Math.min(words.length - 1, r)] as string;
}

function text(words: readonly string[], n: number): string {
  return Array.from({ length: n }, () => zipf(words)).join(' ');
}

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function searchRequests(agent: BenchAgent, words: readonly string[]): AutocannonRequest[] {
  return [
    {
      method: 'POST',
      path: '/api/ac/memory/search',
      setupRequest: (request) => {
        const query = text(words, 1 + Math.floor(Math.random() * 3));
        request.headers = { ...JSON_HEADERS, 'x-api-key': agent.key };
        request.body = JSON.stringify({ agent_key: agent.key, query, limit: 10 });
        return request;
      },
    },
  ];
}

/** Updates of the agent's existing memories (an agent at 10,000 holds the most allowed: no new keys). */
function updateRequests(agent: BenchAgent, words: readonly string[]): AutocannonRequest[] {
  return [
    {
      method: 'POST',
      path: '/api/ac/memory',
      setupRequest: (request) => {
        request.headers = { ...JSON_HEADERS, 'x-api-key': agent.key };
        request.body = JSON.stringify({
          agent_key: agent.key,
          memory_key: pick(agent.memoryKeys),
          memory_value: text(words, WORDS_PER_VALUE),
        });
        return request;
      },
    },
  ];
}

async function main() {
  if (process.env.BENCH_SEARCH === 'off') {
    process.stderr.write('bench:search skipped (BENCH_SEARCH=off)\n');
    return;
  }
  const rounds = envNumber('BENCH_ROUNDS', 3);
  const settings: LoadSettings = {
    seconds: envNumber('BENCH_SECONDS', 6),
    warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 1),
    connections: envNumber('BENCH_CONNECTIONS', 10),
  };
  const words = vocabulary();
  const data = generatePrefill(2 * PER_AGENT, 2);
  for (const memory of data.memories) memory.value = text(words, WORDS_PER_VALUE);
  const [indexed, plain] = data.agents as [BenchAgent, BenchAgent];

  const { dir } = await makeTempDir('search');
  const dataDir = path.join(dir, 'data');
  await mkdir(dataDir);
  await writeSnapshot(dataDir, data);
  const upstream = await startFakeOpenMeteo();
  defer('fake Open-Meteo', () => upstream.close());
  const bare = spawnWithLog({
    name: 'bare Express',
    args: ['--import', 'tsx', path.join(ROOT, 'bench', 'bare-express.ts')],
    env: minimalEnv({ NODE_ENV: 'production' }),
    logFile: path.join(dir, 'bare.log'),
    readyPattern: LISTENING,
  });
  const bareUrl = (await bare.ready).match[1] as string;
  const server = spawnBenchServer({
    name: 'agent-context serve',
    dataDir,
    upstreamUrl: upstream.url,
    logFile: path.join(dir, 'server.log'),
    logLevel: 'info',
    // BENCH_SEARCH_PROFILE=<dir>: the server runs under --cpu-prof, its profile written there on exit.
    ...(process.env.BENCH_SEARCH_PROFILE
      ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_SEARCH_PROFILE] }
      : {}),
  });
  const url = (await server.ready).match[1] as string;
  process.stderr.write(`${words.length} vocabulary words; 2 agents of ${PER_AGENT} memories; ${url}\n`);

  // Agent A's index, built by its first ranked query, before anything is measured.
  const built = performance.now();
  const first = await fetch(`${url}/api/ac/memory/search`, {
    method: 'POST',
    headers: { ...JSON_HEADERS, 'x-api-key': indexed.key },
    body: JSON.stringify({ agent_key: indexed.key, query: 'deploy', limit: 10 }),
  });
  if (first.status !== 200) throw new Error(`the first ranked query answered ${first.status}`);
  const buildMs = performance.now() - built;
  process.stderr.write(`agent A's index built by its first ranked query in ${buildMs.toFixed(0)} ms\n`);

  const results: HttpResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    const tags = { memories: 2 * PER_AGENT, round };
    const run = async (scenario: string, target: string, requests: AutocannonRequest[]) => {
      const result = await load(scenario, target, requests, settings, tags);
      results.push(result);
      process.stderr.write(
        `[${round}] ${scenario}: ${result.opsPerSec.toFixed(0)}/s, p50 ${result.p50} ms, p99 ${result.p99} ms` +
          `${result.non2xx || result.errors ? `, non-2xx ${result.non2xx}, errors ${result.errors}` : ''}\n`,
      );
    };
    await run('bare Express GET', bareUrl, bareGetRequests(data.agents));
    const stores: [string, BenchAgent][] = [
      ['memory_store, no index', plain],
      ['memory_store, indexed', indexed],
    ];
    if (round % 2 === 0) stores.reverse();
    for (const [scenario, agent] of [...stores, ...[...stores].reverse()]) {
      await run(scenario, url, updateRequests(agent, words));
    }
    await run('memory_search ranked', url, searchRequests(indexed, words));
  }
  await server.stop();
  await bare.stop();

  const of = (scenario: string) => results.filter((r) => r.scenario === scenario);
  /** Mean throughput of a scenario's runs in a round (the two store runs of each side). */
  const meanOps = (scenario: string, round: number) => {
    const runs = of(scenario).filter((r) => r.round === round);
    return runs.reduce((sum, r) => sum + r.opsPerSec, 0) / runs.length;
  };
  const lines = [
    `Agent A's index built by its first ranked query in ${buildMs.toFixed(0)} ms.`,
    '',
    `| round | ceiling GET/s (p99) | store, no index/s | store, indexed/s | indexed ÷ no index | ranked search/s (p50, p99) |`,
    '|---|---|---|---|---|---|',
  ];
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const get = (scenario: string) => of(scenario).find((r) => r.round === round) as HttpResult;
    const ceiling = get('bare Express GET');
    const plainStore = meanOps('memory_store, no index', round);
    const indexedStore = meanOps('memory_store, indexed', round);
    const search = get('memory_search ranked');
    const ratio = indexedStore / plainStore;
    ratios.push(ratio);
    lines.push(
      `| ${round} | ${ceiling.opsPerSec.toFixed(0)} (${ceiling.p99} ms) | ${plainStore.toFixed(0)} | ` +
        `${indexedStore.toFixed(0)} | ${ratio.toFixed(2)} | ${search.opsPerSec.toFixed(0)} (${search.p50} ms, ${search.p99} ms) |`,
    );
  }
  const p99 = median(of('memory_search ranked').map((r) => r.p99));
  const ratio = median(ratios);
  lines.push(
    '',
    `Ranked search p99 (median of rounds): **${p99} ms** (target ≤ 20 ms: ${p99 <= 20 ? 'met' : 'missed'}).`,
    `Store with the index ÷ without (median of rounds): **${ratio.toFixed(2)}** (target ≥ 0.90: ${ratio >= 0.9 ? 'met' : 'missed'}).`,
  );
  const problems = results.filter((r) => r.non2xx || r.errors);
  if (problems.length > 0)
    lines.push(
      '',
      `Problems: ${problems.map((r) => `${r.scenario} [${r.round}] non-2xx ${r.non2xx}`).join('; ')}`,
    );
  const resultsDir = path.join(ROOT, 'bench', 'results');
  await mkdir(resultsDir, { recursive: true });
  await writeFile(
    path.join(resultsDir, 'search-latest.json'),
    `${JSON.stringify({ date: new Date().toISOString(), settings, buildMs, results, p99, ratio }, null, 2)}\n`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench:search failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
