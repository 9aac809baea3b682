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
import { startFakeOpenMeteo } from './fake-upstream.js';
import { load, primeWeatherCache } from './http-load.js';
import { cleanupAll, defer, makeTempDir, ROOT, spawnBenchServer } from './lifecycle.js';
import { scenarioSetting, setting } from './one-scenario.js';
import { prefillStore } from './prefill.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function shortUrl(url: string): string {
  if (url === '') return '(native)';
  const cleaned = url.replace(/^file:\/\//, '');
  const inModules = cleaned.lastIndexOf('node_modules/');
  if (inModules >= 0) return cleaned.slice(inModules + 'node_modules/'.length);
  return cleaned.startsWith(ROOT) ? path.relative(ROOT, cleaned) : cleaned;
}

/** Self time in ms by "function (file:line)" and by file, from the sampled profile. */
function summarise(profile: CpuProfile): { byFunction: Map<string, number>; byFile: Map<string, number> } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const node = nodes.get(id);
    if (!node) return;
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    const file = shortUrl(node.callFrame.url);
    const fn = `${node.callFrame.functionName || '(anonymous)'} (${file}:${node.callFrame.lineNumber + 1})`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    byFile.set(file, (byFile.get(file) ?? 0) + ms);
  });
  return { byFunction, byFile };
}

function table(title: string, rows: Map<string, number>, top: number): string {
  const total = [...rows.values()].reduce((sum, ms) => sum + ms, 0);
  const lines = [...rows]
    .sort(([, a], [, b]) => b - a)
    .slice(0, top)
    .map(
      ([name, ms]) =>
        `${((100 * ms) / total).toFixed(1).padStart(5)}%  ${ms.toFixed(0).padStart(6)} ms  ${name}`,
    );
  return [`${title} (total ${total.toFixed(0)} ms)`, ...lines].join('\n');
}

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
  const { byFunction, byFile } = summarise(profile);
  process.stdout.write(
    `${table('Self time by file', byFile, top)}\n\n${table('Self time by function', byFunction, top)}\n`,
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
