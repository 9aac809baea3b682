/**
 * `npm run bench:gc`: one HTTP scenario under load with the server started under `node --trace-gc-nvp`, and
 * its garbage collections summarised: how many young collections (scavenges), their pauses, how much each
 * left alive and promoted into the old generation, and the full collections. Beside them, from
 * bench/http/flush-probe.mjs (preloaded into the server): the journal's fdatasync calls (how long each held the
 * event loop) and the event loop's longest stall in each second. For finding why the tail latency (p99) is
 * what it is; the figures of record come from `npm run bench`.
 *
 * Each run starts a fresh server on a fresh prefill, because what a collection keeps can depend on the state
 * a process falls into (see src/http/in-flight-list.ts: a Set's left-behind tables kept each request alive
 * until a full collection in some processes and not in others), so one process says little.
 *
 * Settings: BENCH_GC_SCENARIO (memory_retrieve, memory_store, memory_search, data; default memory_retrieve),
 * BENCH_GC_SIZE (memories, default 100000), BENCH_GC_RUNS (default 3), BENCH_SECONDS (default 8),
 * BENCH_CONNECTIONS (default 50), BENCH_AGENTS (default 1000).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { spawnBenchServer } from '../shared/bench-server.js';
import { defer, makeTempDir, runMain } from '../shared/cleanup.js';
import { startFakeOpenMeteo } from '../shared/fake-open-meteo.js';
import { prefillStore } from '../shared/prefill.js';
import { envNumber } from '../shared/settings.js';
import { median, percentile } from '../shared/stats.js';
import { load } from './load.js';
import { scenarioSetting } from './one-scenario.js';
import { primeWeatherCache } from './weather-cache.js';

/** One `--trace-gc-nvp` line: `gc=s` (scavenge) or `gc=mc` (full mark-compact), with `name=value` fields. */
interface Collection {
  kind: string;
  pause: number;
  promoted: number;
  survived: number;
}

/** The whole lines of a child's output so far: the last may still be arriving. */
function wholeLines(text: string): string[] {
  return text.slice(0, text.lastIndexOf('\n') + 1).split('\n');
}

function parseTrace(text: string): Collection[] {
  const collections: Collection[] = [];
  for (const line of wholeLines(text)) {
    const kind = line.match(/\bgc=(\w+)/)?.[1];
    if (!kind) continue;
    const field = (name: string) => Number(line.match(new RegExp(`\\b${name}=([\\d.]+)`))?.[1] ?? 0);
    collections.push({
      kind,
      pause: field('pause'),
      promoted: field('promoted'),
      survived: field('new_space_survived'),
    });
  }
  return collections;
}

function summariseTrace(collections: Collection[]): string {
  // Young: the scavenger's `s` (or, under V8's minor mark flags, `mmc` / `ms`); full: `mc`.
  const young = collections.filter((c) => c.kind !== 'mc');
  const full = collections.filter((c) => c.kind === 'mc');
  const pauses = young.map((c) => c.pause).sort((a, b) => a - b);
  const mean = pauses.reduce((sum, p) => sum + p, 0) / Math.max(1, pauses.length);
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
  const survived = median(young.map((c) => c.survived));
  const promoted = median(young.map((c) => c.promoted));
  const fullMs = full.reduce((sum, c) => sum + c.pause, 0);
  return (
    `${young.length} young collections: pause mean ${mean.toFixed(1)} ms, p90 ${percentile(pauses, 90)} ms, ` +
    `max ${percentile(pauses, 100)} ms; per collection (median) survived ${kb(survived)}, ` +
    `promoted ${kb(promoted)}; ${full.length} full collections, ${fullMs.toFixed(0)} ms in all`
  );
}

/**
 * The probe's lines (bench/http/flush-probe.mjs): each fdatasync's ms, and each second's longest loop stall, from
 * `skipSeconds` probe seconds on (the load's start, where the first requests compile the code, is left out).
 */
function summariseProbe(text: string, skipSeconds: number): string {
  const flushes: number[] = [];
  const stalls: number[] = [];
  let second = 0;
  for (const line of wholeLines(text)) {
    const [name, ...values] = line.split(' ');
    if (name === 'loop-probe' && ++second > skipSeconds) stalls.push(Number(values[0]));
    // A second's flushes follow its loop line.
    if (name === 'flush-probe' && second > skipSeconds) flushes.push(...values.map(Number));
  }
  flushes.sort((a, b) => a - b);
  stalls.sort((a, b) => a - b);
  const seconds = Math.max(1, stalls.length);
  const over = (list: number[], ms: number) => list.filter((value) => value > ms).length;
  return (
    `${flushes.length} journal flushes (${(flushes.length / seconds).toFixed(0)} a second): median ` +
    `${median(flushes).toFixed(2)} ms, p99 ${percentile(flushes, 99).toFixed(1)} ms, max ${percentile(flushes, 100).toFixed(1)} ms, ` +
    `${over(flushes, 5)} over 5 ms, ${(flushes.reduce((sum, ms) => sum + ms, 0) / seconds / 10).toFixed(1)}% ` +
    `of the time; the event loop's longest stall per second: median ${median(stalls).toFixed(1)} ms, max ` +
    `${percentile(stalls, 100)} ms, over 20 ms in ${over(stalls, 20)} of ${stalls.length} seconds`
  );
}

async function main(): Promise<void> {
  const { scenario, requestsFor } = scenarioSetting('BENCH_GC_SCENARIO');
  const size = envNumber('BENCH_GC_SIZE', 100_000, 1);
  const runs = envNumber('BENCH_GC_RUNS', 3, 1);
  const settings = {
    seconds: envNumber('BENCH_SECONDS', 8, 1),
    warmupSeconds: 1,
    connections: envNumber('BENCH_CONNECTIONS', 50, 1),
  };
  const upstream = await startFakeOpenMeteo();
  defer('fake Open-Meteo', () => upstream.close());
  for (let run = 1; run <= runs; run++) {
    const { dir, remove } = await makeTempDir(`gc-${run}`);
    const dataDir = path.join(dir, 'data');
    await mkdir(dataDir);
    const prefill = await prefillStore(dataDir, size, envNumber('BENCH_AGENTS', 1000, 1));
    const server = spawnBenchServer({
      name: `agent-context serve (GC traced, run ${run})`,
      dataDir,
      upstreamUrl: upstream.url,
      logFile: path.join(dir, 'server.log'),
      logLevel: 'info',
      nodeArgs: ['--trace-gc-nvp', '--import', path.join(import.meta.dirname, 'flush-probe.mjs')],
    });
    let trace = '';
    server.child.stdout?.on('data', (chunk: Buffer) => {
      trace += chunk.toString('utf8');
    });
    const { url } = await server.ready;
    await primeWeatherCache(url, prefill.agents[0] as (typeof prefill.agents)[number]);
    trace = ''; // the start and the cache's priming are not the scenario's (its 1 s warm-up is counted)
    const result = await load(scenario, url, requestsFor(prefill.agents), settings, {
      memories: size,
      round: run,
    });
    const during = trace;
    await server.stop();
    await remove();
    process.stdout.write(
      `run ${run}: ${scenario} at ${size} memories, ${result.opsPerSec.toFixed(0)} ops/s, p50 ${result.p50} ms, ` +
        `p99 ${result.p99} ms, non-2xx ${result.non2xx}\n  ${summariseTrace(parseTrace(during))}\n` +
        `  ${summariseProbe(during, settings.warmupSeconds + 1)}\n`,
    );
  }
}

await runMain('bench:gc', main);
