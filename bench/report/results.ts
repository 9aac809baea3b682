/**
 * The shape of `npm run bench`'s results: the JSON written to bench/results/latest.json, from which the Markdown
 * report is rendered.
 */
import type { HttpResult } from '../http/load.js';
import type { McpResult } from '../mcp/sequential-calls.js';
import type { DiskSync } from '../suite/disk-sync.js';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
}

export interface StartupResult {
  memories: number;
  snapshotMb: number;
  prefillMs: number;
  readyMs: number;
  rssReadyMb: number;
  rssAfterLoadMb: number;
  /** VmRSS after the load and SETTLE_SECONDS idle (V8's memory reducer gives back what the load took). */
  rssSettledMb: number;
  peakRssMb: number;
  shutdownMs: number;
  exitCode: number | null;
  /** Log lines at level error or fatal while it ran, and the first of them. */
  errorLogLines: number;
  firstErrorLog?: string;
}

export interface PostgresInstanceResult {
  readyMs: number;
  rssReadyMb: number;
  shutdownMs?: number;
  exitCode?: number | null;
  errorLogLines?: number;
  firstErrorLog?: string;
}

/** How the PostgreSQL rows were set up (bench/suite/postgres-instances.ts). */
export interface PostgresSetup {
  memories: number;
  /** The server's version (SHOW server_version). */
  version: string;
  /** The durability settings of the cluster. */
  durability: string;
  /** initdb, start and CREATE DATABASE. */
  clusterMs: number;
  prefill: {
    method: string;
    migrateMs: number;
    writeMs: number;
    settleMs: number;
    rows: { accounts: number; ledger: number; memories: number };
  };
  /** AC_INSTANCES of every instance. */
  acInstances: number;
  instances: PostgresInstanceResult[];
  /** Whether one priming fetch served every instance (the cache shared on the database) or each was primed. */
  weatherCache: 'shared' | 'per instance';
  upstreamRequestsToPrime?: number;
}

export interface Ratio {
  name: string;
  value: number;
  unit: 'ratio' | 'ops/s' | 'ms' | 'MB';
  goal: string;
  /** null: shown for information, with no goal. */
  met: boolean | null;
  /** How it was computed, e.g. "memory_store @100,000 ÷ bare POST". */
  from: string;
}

export interface BenchResults {
  date: string;
  command: string;
  machine: Machine;
  /** One journal commit's write and fdatasync on this disk, measured before the loads. */
  diskSync: DiskSync;
  versions: Record<string, string>;
  git: { commit: string; dirtyFiles: string[] };
  settings: {
    rounds: number;
    seconds: number;
    warmupSeconds: number;
    connections: number;
    sizes: number[];
    agents: number;
    mcpMemories: number;
    peerEntities: number;
    searchLimit: number;
    serverLogLevel: string;
    /** Whether the PostgreSQL rows were measured (BENCH_POSTGRES, on unless "off"). */
    postgres: boolean;
  };
  http: HttpResult[];
  mcp: McpResult[];
  startup: StartupResult[];
  /** The PostgreSQL setup at the largest size, when measured. */
  postgres?: PostgresSetup;
  peerBuildMs: number;
  ratios: Ratio[];
  problems: string[];
  totalSeconds: number;
}
