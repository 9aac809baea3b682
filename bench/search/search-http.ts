/**
 * `npm run bench:search` (issue 15): ranked memory_search over HTTP, and what the search index costs a store. Two
 * agents of 10,000 memories each (values of 30 words drawn Zipf-like from the search corpus' vocabulary), agent A's
 * index built by its first ranked query; in each round, the ceiling (bare Express GET), memory_store updates of
 * each agent (no index, indexed) in alternating order, then ranked searches of agent A. Prints, per round, the
 * throughputs and the ratio indexed ÷ no index, and the targets (ranked p99 ≤ 20 ms, the ratio ≥ 0.90);
 * bench/results/search-latest.json. BENCH_ROUNDS (3), BENCH_SECONDS (6), BENCH_WARMUP_SECONDS (1),
 * BENCH_CONNECTIONS (10); BENCH_SEARCH=off skips it.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { AutocannonRequest } from 'autocannon';
import { startBareExpress } from '../ceilings/start-ceilings.js';
import { type HttpResult, type LoadSettings, load } from '../http/load.js';
import { bareGetRequests, JSON_HEADERS } from '../http/requests.js';
import { spawnBenchServer } from '../shared/bench-server.js';
import { defer, makeTempDir, runMain } from '../shared/cleanup.js';
import { startFakeOpenMeteo } from '../shared/fake-open-meteo.js';
import { type BenchAgent, generatePrefill, writeSnapshot } from '../shared/prefill.js';
import { pick } from '../shared/random.js';
import { writeResultsFile } from '../shared/results-file.js';
import { envInteger, envNumber } from '../shared/settings.js';
import { median } from '../shared/stats.js';
import { zipfText as text, vocabulary } from './search-words.mjs';

const PER_AGENT = 10_000;
const WORDS_PER_VALUE = 30;

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
  const rounds = envInteger('BENCH_ROUNDS', 3, 1);
  const settings: LoadSettings = {
    seconds: envInteger('BENCH_SECONDS', 6, 1),
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 1, 0),
    connections: envInteger('BENCH_CONNECTIONS', 10, 1),
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
  const bare = await startBareExpress(path.join(dir, 'bare.log'));
  const bareUrl = bare.url;
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
  const { url } = await server.ready;
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
  await writeResultsFile('search-latest.json', {
    date: new Date().toISOString(),
    settings,
    buildMs,
    results,
    p99,
    ratio,
  });
  process.stdout.write(`${lines.join('\n')}\n`);
}

await runMain('bench:search', main);
