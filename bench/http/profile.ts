/**
 * `npm run bench:profile`: one HTTP scenario under load with the server started under `node --cpu-prof`, and
 * the profile summarised: self time by function and by file, the heaviest first. For finding where a
 * request's time goes before changing anything; the figures of record come from `npm run bench`.
 *
 * Settings: BENCH_PROFILE_SCENARIO (memory_retrieve, memory_store, memory_search, data; default
 * memory_retrieve), BENCH_PROFILE_SIZE (memories, default 100000), BENCH_SECONDS (default 10),
 * BENCH_CONNECTIONS (default 50), BENCH_AGENTS (default 1000), BENCH_PROFILE_TOP (rows, default 40).
 */
import { copyFile, mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { spawnBenchServer } from '../shared/bench-server.js';
import { defer, makeTempDir, runMain } from '../shared/cleanup.js';
import { type CpuProfile, summarise, table } from '../shared/cpu-profile.js';
import { startFakeOpenMeteo } from '../shared/fake-open-meteo.js';
import { prefillStore } from '../shared/prefill.js';
import { RESULTS_DIR } from '../shared/results-file.js';
import { envNumber } from '../shared/settings.js';
import { load } from './load.js';
import { scenarioSetting } from './one-scenario.js';
import { primeWeatherCache } from './weather-cache.js';

async function main(): Promise<void> {
  const { scenario, requestsFor } = scenarioSetting('BENCH_PROFILE_SCENARIO');
  const size = envNumber('BENCH_PROFILE_SIZE', 100_000, 1);
  const settings = {
    seconds: envNumber('BENCH_SECONDS', 10, 1),
    warmupSeconds: 1,
    connections: envNumber('BENCH_CONNECTIONS', 50, 1),
  };
  const top = envNumber('BENCH_PROFILE_TOP', 40, 1);

  const { dir } = await makeTempDir('profile');
  const dataDir = path.join(dir, 'data');
  const profileDir = path.join(dir, 'cpu');
  await mkdir(dataDir);
  const prefill = await prefillStore(dataDir, size, envNumber('BENCH_AGENTS', 1000, 1));
  const upstream = await startFakeOpenMeteo();
  defer('fake Open-Meteo', () => upstream.close());
  const server = spawnBenchServer({
    name: 'agent-context serve (profiled)',
    dataDir,
    upstreamUrl: upstream.url,
    logFile: path.join(dir, 'server.log'),
    logLevel: 'info',
    nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profileDir],
  });
  const { url } = await server.ready;
  await primeWeatherCache(url, prefill.agents[0] as (typeof prefill.agents)[number]);
  const result = await load(scenario, url, requestsFor(prefill.agents), settings, {
    memories: size,
    round: 1,
  });
  await server.stop();
  process.stderr.write(
    `${scenario} at ${size} memories: ${result.opsPerSec.toFixed(0)} ops/s (slowed by the profiler), ` +
      `p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}\n`,
  );
  const [file] = (await readdir(profileDir)).filter((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error('the server wrote no CPU profile');
  const profile = JSON.parse(await readFile(path.join(profileDir, file), 'utf8')) as CpuProfile;
  const { byFunction, byFile, byPart } = summarise(profile);
  process.stdout.write(
    `${table('Self time by part', byPart, top)}\n\n${table('Self time by file', byFile, top)}\n\n` +
      `${table('Self time by function', byFunction, top)}\n`,
  );
  const kept = path.join(RESULTS_DIR, `${scenario}.cpuprofile`);
  await mkdir(RESULTS_DIR, { recursive: true });
  await copyFile(path.join(profileDir, file), kept);
  process.stdout.write(`\nProfile (open in Chrome DevTools or speedscope): ${kept}\n`);
}

await runMain('bench:profile', main);
