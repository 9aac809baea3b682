/**
 * The PostgreSQL side of `npm run bench` (issue 13): a throwaway PostgreSQL cluster with fsync on (a commit
 * is durable when acknowledged, as the JSON store's fdatasync makes it), prefilled with the same data as the
 * JSON store, and two `agent-context serve` instances on that one database, both started with
 * AC_INSTANCES=2. The one-instance scenarios load the first while the second idles; the two-instance
 * scenario loads both. Everything is registered for cleanup (Ctrl-C included), the cluster last.
 */
import path from 'node:path';
import { PostgresCluster, PostgresClusterError } from '../../test/helpers/postgres-cluster.js';
import { startTextbookExpress } from '../ceilings/start-ceilings.js';
import { primeWeatherCache, weatherCacheHits } from '../http/weather-cache.js';
import { postgresVersion, writePostgres } from '../postgres/prefill-postgres.js';
import type { PostgresSetup } from '../report/results.js';
import { errorLogLines, spawnBenchServer } from '../shared/bench-server.js';
import { defer, makeTempDir } from '../shared/cleanup.js';
import type { FakeOpenMeteo } from '../shared/fake-open-meteo.js';
import type { PrefillData } from '../shared/prefill.js';
import { clusterProcesses, residentMemory } from '../shared/process-usage.js';
import type { SpawnedWithLog } from '../shared/processes.js';

export const POSTGRES_INSTANCES = 2;
/** The instances' pool (AC_DB_POOL_MAX's default), and so the ceiling's. */
const DEFAULT_POOL_MAX = 10;

export interface PostgresBench {
  /** The instances' base URLs, in order: the first carries the one-instance scenarios. */
  urls: string[];
  /** The ceiling's base URL: the textbook transaction by hand in a bare Express app (ceilings/textbook-express.ts). */
  textbookUrl: string;
  /** The processes of each instance and of the ceiling, in order, for their processor time. */
  pids: { instances: number[]; textbook: number };
  /** Picks the cluster's processes (its postmaster and its children). */
  database: (pid: number, parent: number) => boolean;
  /** What was set up so far; `stop` fills in each instance's shutdown. */
  setup: PostgresSetup;
  /**
   * Stops the instances (recording their exit and error log lines) and removes the cluster; answers the problems
   * seen (error log lines, an exit code other than 0).
   */
  stop: () => Promise<string[]>;
}

export async function startPostgresBench(opts: {
  data: PrefillData;
  upstream: FakeOpenMeteo;
  logLevel: string;
  progress: (message: string) => void;
}): Promise<PostgresBench> {
  const { data, upstream, progress } = opts;
  progress('starting PostgreSQL (throwaway cluster, fsync on)');
  const clusterStarting = performance.now();
  let cluster: PostgresCluster;
  try {
    cluster = await PostgresCluster.start({ fsync: true });
  } catch (err) {
    if (err instanceof PostgresClusterError)
      throw new Error(`${err.message}\n(BENCH_POSTGRES=off runs the benchmark without PostgreSQL.)`);
    throw err;
  }
  const stopCluster = defer(`PostgreSQL cluster ${cluster.dir}`, () => cluster.stop());
  const databaseUrl = await cluster.createDatabase('agent_context');
  const clusterMs = performance.now() - clusterStarting;
  const version = await postgresVersion(databaseUrl);
  progress(
    `  PostgreSQL ${version} ready in ${Math.round(clusterMs)} ms at ${cluster.address.host}:${cluster.address.port}`,
  );

  const prefill = await writePostgres(databaseUrl, data);
  progress(
    `  prefilled ${prefill.rows.memories} memories in ${Math.round(prefill.writeMs)} ms (migrate ` +
      `${Math.round(prefill.migrateMs)} ms, VACUUM ANALYZE + CHECKPOINT ${Math.round(prefill.settleMs)} ms)`,
  );

  const { dir, remove } = await makeTempDir('postgres');
  const servers: SpawnedWithLog[] = [];
  const setup: PostgresSetup = {
    memories: data.memories.length,
    version,
    durability: 'fsync, synchronous_commit and full_page_writes on; every other setting initdb’s default',
    clusterMs,
    prefill,
    acInstances: POSTGRES_INSTANCES,
    instances: [],
    weatherCache: 'shared',
  };
  const urls: string[] = [];
  for (let i = 1; i <= POSTGRES_INSTANCES; i++) {
    const server = spawnBenchServer({
      name: `agent-context serve on PostgreSQL #${i}`,
      databaseUrl,
      instances: POSTGRES_INSTANCES,
      upstreamUrl: upstream.url,
      logFile: path.join(dir, `server-${i}.log`),
      logLevel: opts.logLevel,
    });
    servers.push(server);
    const { ms: readyMs, url } = await server.ready;
    const rss = await residentMemory(server.child.pid as number);
    urls.push(url);
    setup.instances.push({ readyMs, rssReadyMb: rss?.rssMb ?? Number.NaN });
    progress(`  instance ${i} ready in ${Math.round(readyMs)} ms at ${url}, RSS ${rss?.rssMb.toFixed(0)} MB`);
  }

  // The ceiling of the PostgreSQL rows, on the same database with the instances' pool size (issue 32).
  const textbook = await startTextbookExpress(
    path.join(dir, 'textbook-express.log'),
    databaseUrl,
    DEFAULT_POOL_MAX,
  );
  const textbookUrl = textbook.url;
  progress(`  textbook Express + pg (the ceiling) at ${textbookUrl}, pool ${DEFAULT_POOL_MAX}`);

  // Prime the cache through the first instance; with the cache shared on the database, the others then
  // answer from it. An instance that does not (a cache of its own) fetched what it missed just now, so a
  // second pass over it must hit.
  const agent = data.agents[0] as (typeof data.agents)[number];
  const before = upstream.requests();
  await primeWeatherCache(urls[0] as string, agent);
  for (const url of urls.slice(1)) {
    if ((await weatherCacheHits(url, agent)).misses.length === 0) continue;
    setup.weatherCache = 'per instance';
    const { misses } = await weatherCacheHits(url, agent);
    if (misses.length)
      throw new Error(`the weather queries were not served from ${url}'s cache: ${misses.join('; ')}`);
  }
  setup.upstreamRequestsToPrime = upstream.requests() - before;
  progress(
    `  weather cache primed (${setup.weatherCache === 'shared' ? 'shared: one fetch served every instance' : 'each instance primed: no shared cache'}; ` +
      `${setup.upstreamRequestsToPrime} upstream requests)`,
  );

  return {
    urls,
    textbookUrl,
    pids: {
      instances: servers.map((server) => server.child.pid as number),
      textbook: textbook.pid,
    },
    database: clusterProcesses(cluster.dir),
    setup,
    stop: async () => {
      await textbook.stop();
      for (const [i, server] of servers.entries()) {
        const stopping = performance.now();
        const exitCode = await server.stop();
        const errors = await errorLogLines(server.logFile);
        Object.assign(setup.instances[i] ?? {}, {
          shutdownMs: performance.now() - stopping,
          exitCode,
          errorLogLines: errors.count,
          ...(errors.first === undefined ? {} : { firstErrorLog: errors.first }),
        });
      }
      await remove();
      await stopCluster();
      return setup.instances.flatMap((instance, i) => [
        ...(instance.errorLogLines
          ? [
              `PostgreSQL instance ${i + 1} logged ${instance.errorLogLines} error lines; first: ${instance.firstErrorLog}`,
            ]
          : []),
        ...(instance.exitCode !== 0
          ? [`PostgreSQL instance ${i + 1} exited with code ${instance.exitCode} after SIGTERM.`]
          : []),
      ]);
    },
  };
}
