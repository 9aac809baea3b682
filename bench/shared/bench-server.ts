/**
 * The built `agent-context serve` as the benchmarks run it, and what its log says went wrong.
 */
import { readFile } from 'node:fs/promises';
import { BUILT_CLI } from './build.mjs';
import { minimalEnv, type SpawnedWithLog, spawnWithLog } from './processes.js';

/** Where a bench server keeps its data: a JSON file store's DATA_DIR, or a PostgreSQL database. */
export type BenchServerStore =
  | { dataDir: string; databaseUrl?: never }
  | { databaseUrl: string; dataDir?: never };

/**
 * The built `agent-context serve` on `dataDir` or `databaseUrl` (then with no DATA_DIR: the service refuses
 * both), as the benchmark runs it: production mode, on a free loopback port, rate limits off (50
 * connections from one address would be answered 429), weather from the fake Open-Meteo at `upstreamUrl`.
 * `instances` sets AC_INSTANCES (how many instances share the upstreams' rates). `nodeArgs` go before the
 * script (`--cpu-prof` for the profile).
 */
export function spawnBenchServer(
  opts: BenchServerStore & {
    name: string;
    upstreamUrl: string;
    logFile: string;
    logLevel: string;
    instances?: number;
    nodeArgs?: string[];
  },
): SpawnedWithLog {
  const store: Record<string, string> =
    opts.databaseUrl !== undefined ? { DATABASE_URL: opts.databaseUrl } : { DATA_DIR: opts.dataDir };
  return spawnWithLog({
    name: opts.name,
    args: [...(opts.nodeArgs ?? []), BUILT_CLI, 'serve'],
    env: minimalEnv({
      ...store,
      PORT: '0',
      HOST: '127.0.0.1',
      AC_LOG_LEVEL: opts.logLevel,
      NODE_ENV: 'production',
      AC_RATE_LIMIT: 'off',
      AC_WEATHER_PROVIDERS: 'open-meteo',
      AC_OPEN_METEO_GEOCODING_URL: opts.upstreamUrl,
      AC_OPEN_METEO_FORECAST_URL: opts.upstreamUrl,
      ...(opts.instances === undefined ? {} : { AC_INSTANCES: String(opts.instances) }),
    }),
    logFile: opts.logFile,
    timeoutMs: 120_000,
    stopGraceMs: 120_000,
  });
}

/** Lines of a server log (pino JSON) at level error or fatal, and the first of them. */
export async function errorLogLines(file: string): Promise<{ count: number; first?: string }> {
  const text = await readFile(file, 'utf8').catch(() => '');
  let count = 0;
  let first: string | undefined;
  for (const line of text.split('\n')) {
    if (/"level":(50|60)\b/.test(line)) {
      count++;
      first ??= line.slice(0, 400);
    }
  }
  return { count, ...(first === undefined ? {} : { first }) };
}
