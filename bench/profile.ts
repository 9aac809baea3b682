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
import { type CpuProfile, summarise, table } from './cpu-profile.js';
import { startFakeOpenMeteo } from './fake-upstream.js';
import { load, primeWeatherCache } from './http-load.js';
import { cleanupAll, defer, makeTempDir, ROOT, spawnBenchServer } from './lifecycle.js';
import { scenarioSetting, setting } from './one-scenario.js';
import { prefillStore } from './prefill.js';

async function main(): Promise<void> {
  const { scenario, requestsFor } = scenarioSetting('BENCH_PROFILE_SCENARIO');
  const size = setting('BENCH_PROFILE_SIZE', 100_000);
  const settings = {
    seconds: setting('BENCH_SECONDS', 10),
    warmupSeconds: 1,
    connections: setting('BENCH_CONNECTIONS', 50),
  };
  const top = setting('BENCH_PROFILE_TOP', 40);

  const { dir } = await makeTempDir('profile');
  const dataDir = path.join(dir, 'data');
  const profileDir = path.join(dir, 'cpu');
  await mkdir(dataDir);
  const prefill = await prefillStore(dataDir, size, setting('BENCH_AGENTS', 1000));
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
  const url = (await server.ready).match[1] as string;
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
  const kept = path.join(ROOT, 'bench', 'results', `${scenario}.cpuprofile`);
  await mkdir(path.dirname(kept), { recursive: true });
  await copyFile(path.join(profileDir, file), kept);
  process.stdout.write(`\nProfile (open in Chrome DevTools or speedscope): ${kept}\n`);
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench:profile failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());
