/**
 * `npm run bench`'s settings, from the environment (described in run.ts), and as the results record them.
 */
import type { LoadSettings } from '../http/load.js';
import { SEARCH_LIMIT } from '../http/requests.js';
import type { BenchResults } from '../report/results.js';
import { envNumber } from '../shared/settings.js';

/** The JSON store's and the PostgreSQL instances' AC_LOG_LEVEL (their stderr goes to a file). */
export const SERVER_LOG_LEVEL = 'info';

/** The least length of the unrecorded load each PostgreSQL instance gets before the rounds. */
export const PG_WARMUP_MIN_SECONDS = 5;

export interface SuiteSettings {
  rounds: number;
  seconds: number;
  /** Idle seconds after the load before RSS is read again. */
  settleSeconds: number;
  warmupSeconds: number;
  connections: number;
  agents: number;
  mcpMemories: number;
  peerEntities: number;
  sizes: number[];
  largest: number;
  postgresOn: boolean;
  /** What each autocannon load gets. */
  load: LoadSettings;
}

function envSizes(): number[] {
  const raw = process.env.BENCH_SIZES ?? '10000,100000';
  const sizes = raw.split(',').map((part) => Number(part.trim()));
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`BENCH_SIZES must be a comma-separated list of positive integers, got "${raw}".`);
  return sizes;
}

export function readSettings(): SuiteSettings {
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
  return {
    rounds,
    seconds,
    settleSeconds,
    warmupSeconds,
    connections,
    agents,
    mcpMemories,
    peerEntities,
    sizes,
    largest: Math.max(...sizes),
    postgresOn: (process.env.BENCH_POSTGRES ?? 'on') !== 'off',
    load: { seconds, warmupSeconds, connections },
  };
}

/** The settings as latest.json records them. */
export function recordedSettings(settings: SuiteSettings): BenchResults['settings'] {
  return {
    rounds: settings.rounds,
    seconds: settings.seconds,
    warmupSeconds: settings.warmupSeconds,
    connections: settings.connections,
    sizes: settings.sizes,
    agents: settings.agents,
    mcpMemories: settings.mcpMemories,
    peerEntities: settings.peerEntities,
    searchLimit: SEARCH_LIMIT,
    serverLogLevel: SERVER_LOG_LEVEL,
    postgres: settings.postgresOn,
  };
}
