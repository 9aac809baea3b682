/**
 * `npm run bench` (issue 5): the service under load at each store size, MCP over stdio, and in the same run
 * the ceilings (a bare Express 5 app, stock, and the same app on the service's message classes, shown for
 * information) and the peer (@modelcontextprotocol/server-memory), all back to back
 * so that ratios are meaningful on a noisy machine: in rounds, each ratio computed within a round (a
 * scenario against the ceiling measured a minute before it) and the median of the rounds reported, because
 * the machine's speed drifts by a quarter from one minute to the next. Prints Markdown tables and writes
 * bench/results/latest.json. Settings by environment:
 *
 *   BENCH_ROUNDS (3)                rounds: each measures every ceiling and scenario once, back to back
 *   BENCH_SECONDS (6)               measured seconds per scenario and round
 *   BENCH_WARMUP_SECONDS (1)        warm-up seconds before each scenario
 *   BENCH_SIZES (10000,100000)      store sizes (memories) for the REST scenarios
 *   BENCH_AGENTS (1000)             agents the memories are spread over
 *   BENCH_CONNECTIONS (50)          autocannon connections
 *   BENCH_MCP_MEMORIES (10000)      store size for the MCP stdio scenario
 *   BENCH_PEER_ENTITIES (10000)     server-memory graph size
 *   BENCH_SETTLE_SECONDS (30)       idle seconds after the load before RSS is read again
 *   BENCH_POSTGRES (on)             "off": no PostgreSQL rows. On: at the largest size, a throwaway
 *                                   PostgreSQL 15 (fsync on) with the same data and two instances on it,
 *                                   measured in each round right after the JSON store (postgres-instances.ts)
 */

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, release, totalmem, type } from 'node:os';
import path from 'node:path';
import { measureDiskSync } from './disk-sync.js';
import { startFakeOpenMeteo } from './fake-upstream.js';
import {
  bareGetRequests,
  barePostRequests,
  cachedDataRequests,
  type HttpResult,
  type LoadSettings,
  load,
  loadParallel,
  mcpRetrieveRequests,
  memoryRetrieveRequests,
  memorySearchRequests,
  memoryStoreRequests,
  primeWeatherCache,
  SEARCH_LIMIT,
} from './http-load.js';
import {
  cleanupAll,
  defer,
  errorLogLines,
  LISTENING,
  makeTempDir,
  minimalEnv,
  ROOT,
  residentMemory,
  sleep,
  spawnBenchServer,
  spawnWithLog,
} from './lifecycle.js';
import { benchAgentContextStdio, type McpResult } from './mcp-stdio.js';
import { type PostgresBench, startPostgresBench } from './postgres-instances.js';
import { generatePrefill, prefillStore, writeSnapshot } from './prefill.js';
import { cpuSeconds, used } from './process-cpu.js';
import {
  type BenchResults,
  computeRatios,
  formatNumber,
  type Machine,
  MCP_HTTP_SCENARIOS,
  MODERN_STDIO_SUFFIX,
  PG_SCENARIOS,
  type PostgresSetup,
  renderMarkdown,
  type StartupResult,
  TUNED_CEILINGS,
} from './report.js';
import { benchServerMemory } from './server-memory.js';

const SERVER_LOG_LEVEL = 'info';

/**
 * `load`, with the processor time per 2xx response of the `server` processes (and of the database's processes,
 * picked by `database`) over it: their time over the call's wall time (warm-up included), over the ops/s.
 */
async function withCpu(
  load: () => Promise<HttpResult>,
  server: readonly number[],
  database?: (pid: number, parent: number) => boolean,
): Promise<HttpResult> {
  const ofServer = (pid: number) => server.includes(pid);
  const before = { server: cpuSeconds(ofServer), database: database && cpuSeconds(database) };
  const started = performance.now();
  const result = await load();
  const wall = (performance.now() - started) / 1000;
  const perOp = (seconds: number) => (seconds / wall / result.opsPerSec) * 1e6;
  return {
    ...result,
    cpu: {
      serverUs: perOp(used(before.server, cpuSeconds(ofServer))),
      ...(database && before.database
        ? { databaseUs: perOp(used(before.database, cpuSeconds(database))) }
        : {}),
    },
  };
}
/** The least length of the unrecorded load each PostgreSQL instance gets before the rounds. */
const PG_WARMUP_MIN_SECONDS = 5;

function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min)
    throw new Error(`${name} must be a number ≥ ${min}, got "${raw}".`);
  return value;
}

function envSizes(): number[] {
  const raw = process.env.BENCH_SIZES ?? '10000,100000';
  const sizes = raw.split(',').map((part) => Number(part.trim()));
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`BENCH_SIZES must be a comma-separated list of positive integers, got "${raw}".`);
  return sizes;
}

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

function describeMachine(): Machine {
  let cpu = cpus()[0]?.model?.trim() ?? 'unknown CPU';
  try {
    const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
    cpu = cpuinfo.match(/^model name\s*:\s*(.+)$/m)?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux: keep os.cpus()'s
  }
  return {
    cpu,
    cores: availableParallelism(),
    memoryGb: totalmem() / 1024 ** 3,
    os: `${type()} ${release()}`,
    node: process.version,
  };
}

function gitInfo(): { commit: string; dirtyFiles: string[] } {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--', 'src'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const dirtyFiles = status
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
    return { commit, dirtyFiles };
  } catch {
    return { commit: 'unknown', dirtyFiles: [] };
  }
}

function versionOf(name: string): string {
  try {
    const file = path.join(ROOT, 'node_modules', ...name.split('/'), 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function commandLine(): string {
  const vars = Object.keys(process.env)
    .filter((name) => name.startsWith('BENCH_'))
    .sort()
    .map((name) => `${name}=${process.env[name]}`);
  return [...vars, 'npm run bench'].join(' ');
}

async function main(): Promise<void> {
  const startedAt = performance.now();
  const rounds = envNumber('BENCH_ROUNDS', 3, 1);
  const seconds = envNumber('BENCH_SECONDS', 6, 1);
  // Idle seconds after the load before RSS is read again: under load V8 lets the old generation grow to a
  // few times the live data between full collections, and its memory reducer gives the pages back about
  // 8-20 s after the allocation stops.
  const settleSeconds = envNumber('BENCH_SETTLE_SECONDS', 30, 0);
  const warmupSeconds = envNumber('BENCH_WARMUP_SECONDS', 1, 0);
  const connections = envNumber('BENCH_CONNECTIONS', 50, 1);
  const agents = envNumber('BENCH_AGENTS', 1000, 1);
  const mcpMemories = envNumber('BENCH_MCP_MEMORIES', 10_000, 1);
  const peerEntities = envNumber('BENCH_PEER_ENTITIES', 10_000, 1);
  const sizes = envSizes();
  const largest = Math.max(...sizes);
  const postgresOn = (process.env.BENCH_POSTGRES ?? 'on') !== 'off';
  const settings: LoadSettings = { seconds, warmupSeconds, connections };
  const cli = path.join(ROOT, 'dist', 'cli.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run "npm run build" first (npm run bench does).`);

  const http: HttpResult[] = [];
  const mcp: McpResult[] = [];
  const startup: StartupResult[] = [];
  const problems: string[] = [];
  let postgresSetup: PostgresSetup | undefined;
  const note = (result: HttpResult) => {
    http.push(result);
    progress(
      `  [${result.round}] ${result.scenario}: ${formatNumber(result.opsPerSec)} ops/s, p50 ${result.p50} ms, p99 ${result.p99} ms` +
        (result.non2xx || result.errors ? `, non-2xx ${result.non2xx}, errors ${result.errors}` : ''),
    );
    if (result.non2xx || result.errors) {
      problems.push(
        `${result.scenario} @${formatNumber(result.memories ?? result.ceilingFor ?? 0)}, round ${result.round}: ` +
          `${result.non2xx} non-2xx responses (${JSON.stringify(result.statusCodes)}), ${result.errors} errors ` +
          `(${result.timeouts} timeouts) of ${result.requests} requests.`,
      );
    }
  };

  // The ceiling, bare Express 5, runs throughout (idle when not loaded) and is measured right before each
  // size's scenarios, so that each ratio pairs measurements taken minutes apart at most.
  const diskSync = await measureDiskSync();
  progress(
    `disk: a journal commit's write and fdatasync, median ${diskSync.medianUs} µs, p90 ${diskSync.p90Us} µs`,
  );
  progress('starting bare Express 5 (the ceiling)');
  const { dir: bareDir } = await makeTempDir('bare');
  const bare = spawnWithLog({
    name: 'bare Express',
    args: ['--import', 'tsx', path.join(ROOT, 'bench', 'bare-express.ts')],
    env: minimalEnv({ NODE_ENV: 'production' }),
    logFile: path.join(bareDir, 'stderr.log'),
    readyPattern: LISTENING,
  });
  const bareUrl = (await bare.ready).match[1] as string;
  // The second ceiling: the same app, its server making messages with the app's prototypes, as the service's
  // server does (bench/bare-express.ts). For information: the ratios are to the stock app above.
  const tuned = spawnWithLog({
    name: 'bare Express, app prototypes',
    args: ['--import', 'tsx', path.join(ROOT, 'bench', 'bare-express.ts')],
    env: minimalEnv({ NODE_ENV: 'production', BARE_APP_PROTOTYPES: 'on' }),
    logFile: path.join(bareDir, 'stderr-prototypes.log'),
    readyPattern: LISTENING,
  });
  const tunedUrl = (await tuned.ready).match[1] as string;

  const upstream = await startFakeOpenMeteo();
  defer('fake Open-Meteo', () => upstream.close());

  for (const size of sizes) {
    progress(`agent-context REST with ${formatNumber(size)} memories over ${formatNumber(agents)} agents`);
    const { dir, remove } = await makeTempDir(`rest-${size}`);
    const dataDir = path.join(dir, 'data');
    await mkdir(dataDir);
    // Generated once: the JSON store's snapshot and, at the largest size, the PostgreSQL database get the same.
    const data = generatePrefill(size, agents);
    const written = await writeSnapshot(dataDir, data);
    const prefill = { agents: data.agents, fileBytes: written.fileBytes, ms: data.ms + written.ms };
    progress(`  prefilled ${(prefill.fileBytes / 1e6).toFixed(1)} MB in ${formatNumber(prefill.ms)} ms`);
    const server = spawnBenchServer({
      name: 'agent-context serve',
      dataDir,
      upstreamUrl: upstream.url,
      logFile: path.join(dir, 'server.log'),
      logLevel: SERVER_LOG_LEVEL,
    });
    const { ms: readyMs, match } = await server.ready;
    const pid = server.child.pid as number;
    const atReady = await residentMemory(pid);
    const url = match[1] as string;
    progress(`  ready in ${formatNumber(readyMs)} ms at ${url}, RSS ${atReady?.rssMb.toFixed(0)} MB`);

    await primeWeatherCache(url, prefill.agents[0] as (typeof prefill.agents)[number]);

    // PostgreSQL (issue 13), started once the JSON store's server is up and its start measured.
    let pg: PostgresBench | undefined;
    if (postgresOn && size === largest) {
      pg = await startPostgresBench({ data, upstream, logLevel: SERVER_LOG_LEVEL, progress });
      postgresSetup = pg.setup;
      // A fresh instance on PostgreSQL measured slow for its first seconds of load: its first memory_retrieve
      // load at about half the next one, also when the other instance had just read the same data (so not
      // the database's buffers; likely the new pool's backends and code not yet optimised). So each instance
      // gets one unrecorded memory_retrieve load first. The JSON store's rows keep the conditions of the
      // earlier runs (no such load).
      for (const instance of pg.urls) {
        const warmSeconds = Math.max(seconds, PG_WARMUP_MIN_SECONDS);
        progress(`  warming ${instance} up: ${warmSeconds} s of memory_retrieve, not recorded`);
        const warm = await load(
          'warm-up (PostgreSQL)',
          instance,
          memoryRetrieveRequests(prefill.agents),
          { ...settings, seconds: warmSeconds },
          { memories: size, round: 0 },
        );
        if (warm.non2xx || warm.errors)
          problems.push(
            `warm-up of ${instance}: ${warm.non2xx} non-2xx (${JSON.stringify(warm.statusCodes)}), ${warm.errors} errors`,
          );
      }
    }
    let afterLoad: Awaited<ReturnType<typeof residentMemory>>;
    let loadEnded = performance.now();
    for (let round = 1; round <= rounds; round++) {
      progress(`  round ${round} of ${rounds}: the ceilings (bare Express 5), then agent-context`);
      // The second ceiling first, so that the stock one (the targets' ceiling) stays right before the scenarios.
      note(
        await load(TUNED_CEILINGS.post, tunedUrl, barePostRequests(prefill.agents), settings, {
          ceilingFor: size,
          round,
        }),
      );
      note(
        await load(TUNED_CEILINGS.get, tunedUrl, bareGetRequests(prefill.agents), settings, {
          ceilingFor: size,
          round,
        }),
      );
      note(
        await load('bare Express POST', bareUrl, barePostRequests(prefill.agents), settings, {
          ceilingFor: size,
          round,
        }),
      );
      note(
        await load('bare Express GET', bareUrl, bareGetRequests(prefill.agents), settings, {
          ceilingFor: size,
          round,
        }),
      );
      // Reads first, so that the first round sees the store at its nominal size; memory_store (which adds
      // keys) last.
      const tags = { memories: size, round };
      note(
        await withCpu(
          () => load('memory_retrieve', url, memoryRetrieveRequests(prefill.agents), settings, tags),
          [pid],
        ),
      );
      note(await load('memory_search', url, memorySearchRequests(prefill.agents), settings, tags));
      note(await load('data (cached)', url, cachedDataRequests(prefill.agents), settings, tags));
      for (const [era, revision] of [
        ['legacy', '2025-11-25'],
        ['modern', '2026-07-28'],
      ] as const) {
        const requests = mcpRetrieveRequests(prefill.agents, revision);
        note(await load(MCP_HTTP_SCENARIOS[era], url, requests, settings, tags));
      }
      note(
        await withCpu(
          () => load('memory_store', url, memoryStoreRequests(prefill.agents), settings, tags),
          [pid],
        ),
      );
      // The JSON store's server right after its own load, before the PostgreSQL scenarios leave it idle.
      if (round === rounds) {
        afterLoad = await residentMemory(pid);
        loadEnded = performance.now();
      }
      if (pg) {
        const [first, ...others] = pg.urls as [string, ...string[]];
        // Each ceiling (the textbook transaction by hand, issue 32) right before its scenario.
        const textbook = pg.textbookUrl;
        const { pids, database } = pg;
        const [firstPid] = pids.instances as [number];
        const ceiling = { ceilingFor: size, round };
        note(
          await withCpu(
            () =>
              load(
                PG_SCENARIOS.textbookGet,
                textbook,
                memoryRetrieveRequests(prefill.agents),
                settings,
                ceiling,
              ),
            [pids.textbook],
            database,
          ),
        );
        note(
          await withCpu(
            () => load(PG_SCENARIOS.retrieve, first, memoryRetrieveRequests(prefill.agents), settings, tags),
            [firstPid],
            database,
          ),
        );
        note(await load(PG_SCENARIOS.cached, first, cachedDataRequests(prefill.agents), settings, tags));
        note(
          await withCpu(
            () =>
              load(
                PG_SCENARIOS.textbookPost,
                textbook,
                memoryStoreRequests(prefill.agents),
                settings,
                ceiling,
              ),
            [pids.textbook],
            database,
          ),
        );
        note(
          await withCpu(
            () => load(PG_SCENARIOS.store, first, memoryStoreRequests(prefill.agents), settings, tags),
            [firstPid],
            database,
          ),
        );
        const targets = [first, ...others].map((target) => ({
          url: target,
          requests: cachedDataRequests(prefill.agents),
        }));
        note(await loadParallel(PG_SCENARIOS.cachedTwo, targets, settings, tags));
      }
    }

    progress(`  RSS ${afterLoad?.rssMb.toFixed(0)} MB after the load; idle ${settleSeconds} s`);
    // Counted from the server's own last load (the PostgreSQL scenarios after it are idle time for it).
    await sleep(Math.max(0, settleSeconds * 1000 - (performance.now() - loadEnded)));
    const settled = await residentMemory(pid);
    const stopping = performance.now();
    const exitCode = await server.stop();
    const shutdownMs = performance.now() - stopping;
    const errors = await errorLogLines(server.logFile);
    if (errors.count)
      problems.push(
        `server @${formatNumber(size)} logged ${errors.count} error lines; first: ${errors.first}`,
      );
    if (exitCode !== 0)
      problems.push(`server @${formatNumber(size)} exited with code ${exitCode} after SIGTERM.`);
    if (pg) {
      await pg.stop();
      for (const [i, instance] of pg.setup.instances.entries()) {
        if (instance.errorLogLines)
          problems.push(
            `PostgreSQL instance ${i + 1} logged ${instance.errorLogLines} error lines; first: ${instance.firstErrorLog}`,
          );
        if (instance.exitCode !== 0)
          problems.push(`PostgreSQL instance ${i + 1} exited with code ${instance.exitCode} after SIGTERM.`);
      }
    }
    startup.push({
      memories: size,
      snapshotMb: prefill.fileBytes / 1e6,
      prefillMs: prefill.ms,
      readyMs,
      rssReadyMb: atReady?.rssMb ?? Number.NaN,
      rssAfterLoadMb: afterLoad?.rssMb ?? Number.NaN,
      rssSettledMb: settled?.rssMb ?? Number.NaN,
      peakRssMb: afterLoad?.peakMb ?? Number.NaN,
      shutdownMs,
      exitCode,
      errorLogLines: errors.count,
      ...(errors.first === undefined ? {} : { firstErrorLog: errors.first }),
    });
    await remove();
  }

  await Promise.all([bare.stop(), tuned.stop()]);

  for (const era of ['legacy', 'modern'] as const) {
    const suffix = era === 'modern' ? MODERN_STDIO_SUFFIX : '';
    progress(`agent-context MCP over stdio${suffix} with ${formatNumber(mcpMemories)} memories`);
    const { dir, remove } = await makeTempDir('mcp');
    const prefill = await prefillStore(dir, mcpMemories, agents);
    const results = await benchAgentContextStdio({
      dataDir: dir,
      agent: prefill.agents[0] as (typeof prefill.agents)[number],
      memories: prefill.memories,
      seconds,
      warmupSeconds,
      rounds,
      era,
      suffix,
    });
    for (const result of results) {
      mcp.push(result);
      progress(
        `  [${result.round}] ${result.scenario}: ${formatNumber(result.opsPerSec)} calls/s, p99 ${result.p99.toFixed(2)} ms`,
      );
    }
    await remove();
  }

  let peerBuildMs = 0;
  {
    progress(
      `@modelcontextprotocol/server-memory over stdio, graph of ${formatNumber(peerEntities)} entities`,
    );
    const { dir, remove } = await makeTempDir('server-memory');
    // Measured once, for as long as agent-context's rounds together: its calls are slow, so that is still few.
    const peer = await benchServerMemory({
      dir,
      entities: peerEntities,
      seconds: seconds * rounds,
      warmupSeconds,
    });
    peerBuildMs = peer.buildMs;
    for (const result of peer.results) {
      mcp.push(result);
      progress(
        `  ${result.scenario}: ${formatNumber(result.opsPerSec)} calls/s, p99 ${result.p99.toFixed(2)} ms`,
      );
    }
    await remove();
  }

  for (const result of mcp) {
    if (result.errors)
      problems.push(
        `${result.scenario}: ${result.errors} of ${result.calls} calls failed; first: ${result.firstError}`,
      );
  }

  const results: BenchResults = {
    date: new Date().toISOString(),
    command: commandLine(),
    machine: describeMachine(),
    diskSync,
    versions: {
      'agent-context': (
        JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }
      ).version,
      express: versionOf('express'),
      autocannon: versionOf('autocannon'),
      '@modelcontextprotocol/sdk': versionOf('@modelcontextprotocol/sdk'),
      '@modelcontextprotocol/server-memory': versionOf('@modelcontextprotocol/server-memory'),
      lowdb: versionOf('lowdb'),
      ...(postgresSetup ? { pg: versionOf('pg'), postgresql: postgresSetup.version } : {}),
    },
    git: gitInfo(),
    settings: {
      rounds,
      seconds,
      warmupSeconds,
      connections,
      sizes,
      agents,
      mcpMemories,
      peerEntities,
      searchLimit: SEARCH_LIMIT,
      serverLogLevel: SERVER_LOG_LEVEL,
      postgres: postgresOn,
    },
    http,
    mcp,
    startup,
    ...(postgresSetup ? { postgres: postgresSetup } : {}),
    peerBuildMs,
    ratios: computeRatios(http, mcp, startup, largest),
    problems,
    totalSeconds: (performance.now() - startedAt) / 1000,
  };
  const resultsDir = path.join(ROOT, 'bench', 'results');
  await mkdir(resultsDir, { recursive: true });
  const jsonFile = path.join(resultsDir, 'latest.json');
  await writeFile(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\n${renderMarkdown(results)}\n\nJSON: ${path.relative(ROOT, jsonFile)}\n`);
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    progress(`${signal}: cleaning up`);
    cleanupAll().finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench: failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exitCode = 1;
} finally {
  await cleanupAll();
}
