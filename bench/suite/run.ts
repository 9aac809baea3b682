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
 *                                   measured in each round right after the JSON store (suite/postgres-instances.ts)
 */

import path from 'node:path';
import { startBareExpress } from '../ceilings/start-ceilings.js';
import { renderMarkdown } from '../report/markdown.js';
import type { BenchResults, PostgresSetup } from '../report/results.js';
import { computeRatios } from '../report/targets.js';
import { assertBuilt, ROOT } from '../shared/build.mjs';
import { cleanupOnSignals, defer, makeTempDir, runMain } from '../shared/cleanup.js';
import { type FakeOpenMeteo, startFakeOpenMeteo } from '../shared/fake-open-meteo.js';
import { writeResultsFile } from '../shared/results-file.js';
import { Collector } from './collector.js';
import { measureDiskSync } from './disk-sync.js';
import { startJsonStoreServer } from './json-store-server.js';
import { measureAgentContextStdio, measurePeer } from './mcp-rows.js';
import { startPostgresBench } from './postgres-instances.js';
import { progress } from './progress.js';
import { commandLine, describeMachine, gitInfo, versions } from './run-description.js';
import {
  type AtSize,
  type BareCeilings,
  measureCeilings,
  measureJsonStore,
  measurePostgres,
  warmUpPostgres,
} from './scenarios.js';
import { readSettings, recordedSettings, SERVER_LOG_LEVEL, type SuiteSettings } from './settings.js';

/**
 * One store size: the JSON store's server and, at the largest size, the PostgreSQL instances on the same data;
 * then the rounds, each measuring the ceilings, the JSON store's scenarios and the PostgreSQL ones back to back;
 * then both stopped. Answers the PostgreSQL setup when it was measured.
 */
async function measureSize(
  size: number,
  settings: SuiteSettings,
  ceilings: BareCeilings,
  upstream: FakeOpenMeteo,
  collector: Collector,
): Promise<PostgresSetup | undefined> {
  const json = await startJsonStoreServer(size, settings.agents, upstream.url);
  const at: AtSize = { size, agents: json.data.agents, settings: settings.load, collector };
  // PostgreSQL (issue 13), started once the JSON store's server is up and its start measured.
  const pg =
    settings.postgresOn && size === settings.largest
      ? await startPostgresBench({ data: json.data, upstream, logLevel: SERVER_LOG_LEVEL, progress })
      : undefined;
  if (pg) await warmUpPostgres(at, pg);
  for (let round = 1; round <= settings.rounds; round++) {
    progress(`  round ${round} of ${settings.rounds}: the ceilings (bare Express 5), then agent-context`);
    await measureCeilings(at, round, ceilings);
    await measureJsonStore(at, round, json);
    if (round === settings.rounds) await json.loadEnded();
    if (pg) await measurePostgres(at, round, pg);
  }
  const stopped = await json.stop(settings.settleSeconds);
  collector.problems.push(...stopped.problems);
  if (pg) collector.problems.push(...(await pg.stop()));
  collector.startup.push(stopped.startup);
  await json.remove();
  return pg?.setup;
}

async function main(): Promise<void> {
  const startedAt = performance.now();
  const settings = readSettings();
  assertBuilt();
  const collector = new Collector();

  const diskSync = await measureDiskSync();
  progress(
    `disk: a journal commit's write and fdatasync, median ${diskSync.medianUs} µs, p90 ${diskSync.p90Us} µs`,
  );
  // The ceiling, bare Express 5, runs throughout (idle when not loaded) and is measured right before each
  // size's scenarios, so that each ratio pairs measurements taken minutes apart at most. The second ceiling:
  // the same app, its server making messages with the app's prototypes, as the service's server does
  // (ceilings/bare-express.ts). For information: the ratios are to the stock app.
  progress('starting bare Express 5 (the ceiling)');
  const { dir: bareDir } = await makeTempDir('bare');
  const ceilings: BareCeilings = {
    stock: await startBareExpress(path.join(bareDir, 'stderr.log')),
    tuned: await startBareExpress(path.join(bareDir, 'stderr-prototypes.log'), true),
  };
  const upstream = await startFakeOpenMeteo();
  defer('fake Open-Meteo', () => upstream.close());

  let postgresSetup: PostgresSetup | undefined;
  for (const size of settings.sizes) {
    postgresSetup = (await measureSize(size, settings, ceilings, upstream, collector)) ?? postgresSetup;
  }
  await Promise.all([ceilings.stock.stop(), ceilings.tuned.stop()]);

  await measureAgentContextStdio(settings, collector);
  const peerBuildMs = await measurePeer(settings, collector);

  const results: BenchResults = {
    date: new Date().toISOString(),
    command: commandLine(),
    machine: describeMachine(),
    diskSync,
    versions: versions(postgresSetup),
    git: gitInfo(),
    settings: recordedSettings(settings),
    http: collector.http,
    mcp: collector.mcp,
    startup: collector.startup,
    ...(postgresSetup ? { postgres: postgresSetup } : {}),
    peerBuildMs,
    ratios: computeRatios(collector.http, collector.mcp, collector.startup, settings.largest),
    problems: collector.problems,
    totalSeconds: (performance.now() - startedAt) / 1000,
  };
  const jsonFile = await writeResultsFile('latest.json', results);
  process.stdout.write(`\n${renderMarkdown(results)}\n\nJSON: ${path.relative(ROOT, jsonFile)}\n`);
}

cleanupOnSignals(progress);
await runMain('bench:', main);
