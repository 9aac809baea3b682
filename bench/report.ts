/** The benchmark's results: the JSON written to bench/results/latest.json and the Markdown printed. */
import type { DiskSync } from './disk-sync.js';
import type { HttpResult } from './http-load.js';
import type { McpResult } from './mcp-stdio.js';

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

/** The scenarios on PostgreSQL (issue 13), measured at the largest size right after the JSON store's. */
export const PG_SCENARIOS = {
  retrieve: 'memory_retrieve (PostgreSQL)',
  cached: 'data (cached) (PostgreSQL)',
  store: 'memory_store (PostgreSQL)',
  /** Both instances at once, half the connections each: ops/s summed, latencies the larger of the two. */
  cachedTwo: 'data (cached) (PostgreSQL, 2 instances)',
  /** The ceilings (issue 32): the textbook transaction by hand in a bare Express app with pg (textbook-express.ts). */
  textbookGet: 'textbook Express + pg GET (PostgreSQL)',
  textbookPost: 'textbook Express + pg POST (PostgreSQL)',
} as const;

/** MCP over HTTP (`POST /mcp`), memory_retrieve as a tool call, one scenario per protocol era (issue 28). */
export const MCP_HTTP_SCENARIOS = {
  legacy: 'MCP HTTP memory_retrieve (2025-11-25)',
  modern: 'MCP HTTP memory_retrieve (2026-07-28)',
} as const;
/** 2026-07-28 may cost at most 10% of the 2025 era's throughput over HTTP. */
export const MCP_ERA_GOAL = 0.9;
/** The stdio rows of the 2026-07-28 era (the 2025 era's keep their names, 'MCP stdio memory_store'...). */
export const MODERN_STDIO_SUFFIX = ' (2026-07-28)';

/** The second ceiling: bare Express whose server makes messages with the app's prototypes (for information). */
export const TUNED_CEILINGS = {
  post: 'bare Express POST, app prototypes',
  get: 'bare Express GET, app prototypes',
} as const;

export interface PostgresInstanceResult {
  readyMs: number;
  rssReadyMb: number;
  shutdownMs?: number;
  exitCode?: number | null;
  errorLogLines?: number;
  firstErrorLog?: string;
}

/** How the PostgreSQL rows were set up (bench/postgres-instances.ts). */
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

const int = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatNumber(value: number): string {
  return Number.isFinite(value) ? int.format(value) : '—';
}

export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return int.format(value);
}

function formatRatio(ratio: Ratio): string {
  switch (ratio.unit) {
    case 'ratio':
      return `${ratio.value.toFixed(2)}×`;
    case 'ops/s':
      return `${formatNumber(ratio.value)} calls/s`;
    case 'ms':
      return `${formatMs(ratio.value)} ms`;
    case 'MB':
      return `${ratio.value.toFixed(0)} MB`;
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A scenario's results at a store size, one per round, in round order. */
export function roundsOf(results: readonly HttpResult[], scenario: string, memories: number): HttpResult[] {
  return results
    .filter((r) => r.scenario === scenario && (r.memories ?? r.ceilingFor) === memories)
    .sort((x, y) => x.round - y.round);
}

/** The ratio of a scenario to its ceiling in each round (paired by round), and their median. */
function perRound(http: readonly HttpResult[], scenario: string, ceiling: string, memories: number) {
  const ceilings = new Map(roundsOf(http, ceiling, memories).map((r) => [r.round, r]));
  const pairs = roundsOf(http, scenario, memories).flatMap((r) => {
    const c = ceilings.get(r.round);
    return c
      ? [{ round: r.round, ratio: r.opsPerSec / c.opsPerSec, ops: r.opsPerSec, ceiling: c.opsPerSec }]
      : [];
  });
  return { pairs, median: median(pairs.map((p) => p.ratio)) };
}

function ratioFrom(pairs: ReturnType<typeof perRound>['pairs'], unit: string): string {
  const each = pairs
    .map((p) => `${p.ratio.toFixed(2)} (${formatNumber(p.ops)} ÷ ${formatNumber(p.ceiling)})`)
    .join(', ');
  return `median of ${pairs.length} rounds, each ${unit} ops/s in one round: ${each}`;
}

/** Issue 12: p99 at 50 connections for memory_store, memory_retrieve and cached data. */
const P99_GOAL_MS = 25;
/** Issue 13: one instance on PostgreSQL against the JSON store, and two instances against one. */
const PG_VS_JSON_GOAL = 0.5;
const PG_TWO_VS_ONE_GOAL = 1.3;

/** Issue 13's ratios: each PostgreSQL scenario ÷ the JSON store's, two instances ÷ one, and their p99s. */
function postgresRatios(http: readonly HttpResult[], largest: number): Ratio[] {
  const ratios: Ratio[] = [];
  const at = `@${formatNumber(largest)}`;
  const p99s = (scenario: string) =>
    roundsOf(http, scenario, largest)
      .map((r) => formatMs(r.p99))
      .join(', ');
  const p99Ratio = (scenario: string, name: string, compared: string, note: string): Ratio | undefined => {
    const rounds = roundsOf(http, scenario, largest);
    if (rounds.length === 0) return undefined;
    return {
      name: `${name} p99`,
      value: median(rounds.map((r) => r.p99)),
      unit: 'ms',
      goal: '— (shown)',
      met: null,
      from: `median of ${rounds.length} rounds (${p99s(scenario)} ms; ${compared} ${p99s(compared)} ms); ${note}`,
    };
  };
  const pairs = [
    { scenario: PG_SCENARIOS.store, json: 'memory_store', name: 'memory_store' },
    { scenario: PG_SCENARIOS.retrieve, json: 'memory_retrieve', name: 'memory_retrieve' },
    { scenario: PG_SCENARIOS.cached, json: 'data (cached)', name: 'cached data' },
  ];
  for (const pair of pairs) {
    const { pairs: rounds, median: value } = perRound(http, pair.scenario, pair.json, largest);
    if (rounds.length === 0) continue;
    ratios.push({
      name: `${pair.name} on PostgreSQL${at} ÷ JSON store`,
      value,
      unit: 'ratio',
      goal: `≥ ${PG_VS_JSON_GOAL.toFixed(2)}`,
      met: value >= PG_VS_JSON_GOAL,
      from: ratioFrom(rounds, `${pair.scenario} ÷ ${pair.json}`),
    });
    const p99 = p99Ratio(pair.scenario, `${pair.name} on PostgreSQL${at}`, pair.json, 'autocannon, 2xx only');
    if (p99) ratios.push(p99);
  }
  // Issue 32: the service on PostgreSQL against the textbook transaction by hand, on the same database.
  for (const target of [
    {
      scenario: PG_SCENARIOS.retrieve,
      ceiling: PG_SCENARIOS.textbookGet,
      name: 'memory_retrieve',
      goal: 1.5,
    },
    { scenario: PG_SCENARIOS.store, ceiling: PG_SCENARIOS.textbookPost, name: 'memory_store', goal: 1.2 },
  ]) {
    const { pairs: rounds, median: value } = perRound(http, target.scenario, target.ceiling, largest);
    if (rounds.length === 0) continue;
    ratios.push({
      name: `${target.name} on PostgreSQL${at} ÷ textbook Express + pg`,
      value,
      unit: 'ratio',
      goal: `≥ ${target.goal.toFixed(2)}`,
      met: value >= target.goal,
      from: ratioFrom(rounds, `${target.scenario} ÷ ${target.ceiling}`),
    });
  }
  const two = perRound(http, PG_SCENARIOS.cachedTwo, PG_SCENARIOS.cached, largest);
  if (two.pairs.length) {
    const split = roundsOf(http, PG_SCENARIOS.cachedTwo, largest)
      .map((r) => (r.instances ?? []).map((i) => formatNumber(i.opsPerSec)).join(' + '))
      .join('; ');
    ratios.push({
      name: `cached data on PostgreSQL${at}, 2 instances ÷ 1`,
      value: two.median,
      unit: 'ratio',
      goal: `≥ ${PG_TWO_VS_ONE_GOAL.toFixed(2)}`,
      met: two.median >= PG_TWO_VS_ONE_GOAL,
      from:
        `${ratioFrom(two.pairs, `${PG_SCENARIOS.cachedTwo} ÷ ${PG_SCENARIOS.cached}`)}; two instances' ops/s ` +
        `summed (by instance: ${split}), half the connections each`,
    });
    const p99 = p99Ratio(
      PG_SCENARIOS.cachedTwo,
      `cached data on PostgreSQL${at}, 2 instances`,
      PG_SCENARIOS.cached,
      'each round the larger of the two instances’ p99; autocannon, 2xx only',
    );
    if (p99) ratios.push(p99);
  }
  return ratios;
}

export function computeRatios(
  http: readonly HttpResult[],
  mcp: readonly McpResult[],
  startup: readonly StartupResult[],
  largest: number,
): Ratio[] {
  const ratios: Ratio[] = [];
  const at = `@${formatNumber(largest)}`;
  const pairTargets = [
    {
      scenario: 'memory_store',
      ceiling: 'bare Express POST',
      name: `memory_store${at} ÷ bare POST`,
      goal: 0.7,
    },
    {
      scenario: 'memory_retrieve',
      ceiling: 'bare Express GET',
      name: `memory_retrieve${at} ÷ bare GET`,
      goal: 0.75,
    },
    {
      scenario: 'data (cached)',
      ceiling: 'bare Express GET',
      name: `cached data${at} ÷ bare GET`,
      goal: 0.75,
    },
  ];
  for (const target of pairTargets) {
    const { pairs, median: value } = perRound(http, target.scenario, target.ceiling, largest);
    if (pairs.length === 0) continue;
    ratios.push({
      name: target.name,
      value,
      unit: 'ratio',
      goal: `≥ ${target.goal.toFixed(2)}`,
      met: value >= target.goal,
      from: ratioFrom(pairs, `${target.scenario} ÷ ${target.ceiling}`),
    });
    const rounds = roundsOf(http, target.scenario, largest);
    const p99 = median(rounds.map((r) => r.p99));
    ratios.push({
      name: `${target.name.split(' ÷ ')[0]} p99`,
      value: p99,
      unit: 'ms',
      goal: `≤ ${P99_GOAL_MS} ms`,
      met: p99 <= P99_GOAL_MS,
      from:
        `median of ${rounds.length} rounds (${rounds.map((r) => formatMs(r.p99)).join(', ')} ms; the ceiling's ` +
        `${roundsOf(http, target.ceiling, largest)
          .map((r) => formatMs(r.p99))
          .join(', ')} ms); autocannon, 2xx only`,
    });
  }
  // The same scenarios against the second ceiling, for information: what the service costs beyond the same
  // Express without its per-request prototype change, which the service's server avoids.
  for (const [scenario, ceiling, name] of [
    ['memory_store', TUNED_CEILINGS.post, `memory_store${at} ÷ bare POST, app prototypes`],
    ['memory_retrieve', TUNED_CEILINGS.get, `memory_retrieve${at} ÷ bare GET, app prototypes`],
    ['data (cached)', TUNED_CEILINGS.get, `cached data${at} ÷ bare GET, app prototypes`],
  ] as const) {
    const { pairs, median: value } = perRound(http, scenario, ceiling, largest);
    if (pairs.length === 0) continue;
    ratios.push({
      name,
      value,
      unit: 'ratio',
      goal: '— (shown)',
      met: null,
      from: ratioFrom(pairs, `${scenario} ÷ ${ceiling}`),
    });
  }
  ratios.push(...postgresRatios(http, largest));
  const eras = perRound(http, MCP_HTTP_SCENARIOS.modern, MCP_HTTP_SCENARIOS.legacy, largest);
  if (eras.pairs.length) {
    ratios.push({
      name: `MCP HTTP memory_retrieve${at}, 2026-07-28 ÷ 2025-11-25`,
      value: eras.median,
      unit: 'ratio',
      goal: `≥ ${MCP_ERA_GOAL.toFixed(2)}`,
      met: eras.median >= MCP_ERA_GOAL,
      from: ratioFrom(eras.pairs, `${MCP_HTTP_SCENARIOS.modern} ÷ ${MCP_HTTP_SCENARIOS.legacy}`),
    });
  }
  const mcpStores = mcp.filter((r) => r.scenario === 'MCP stdio memory_store');
  const mcpStore = median(mcpStores.map((r) => r.opsPerSec));
  const peerCreate = mcp.find((r) => r.scenario === 'server-memory create_entities');
  for (const suffix of ['', MODERN_STDIO_SUFFIX]) {
    const rows = mcp.filter((r) => r.scenario === `MCP stdio memory_store${suffix}`);
    if (rows.length === 0) continue;
    const value = median(rows.map((r) => r.opsPerSec));
    ratios.push({
      name: `MCP stdio memory_store${suffix || ' (2025-11-25)'}`,
      value,
      unit: 'ops/s',
      goal: '≥ 2,000 calls/s',
      met: value >= 2000,
      from:
        `sequential; median of ${rows.length} rounds (${rows.map((r) => formatNumber(r.opsPerSec)).join(', ')}); ` +
        `store of ${formatNumber(rows[0]?.size ?? 0)} memories at the start`,
    });
  }
  if (mcpStores.length && peerCreate) {
    const value = mcpStore / peerCreate.opsPerSec;
    ratios.push({
      name: `MCP stdio memory_store ÷ server-memory create_entities@${formatNumber(peerCreate.size)}`,
      value,
      unit: 'ratio',
      goal: '≥ 30',
      met: value >= 30,
      from: `${formatNumber(mcpStore)} (median) ÷ ${formatNumber(peerCreate.opsPerSec)} calls/s`,
    });
  }
  const boot = startup.find((s) => s.memories === largest);
  if (boot) {
    ratios.push({
      name: `ready to serve${at}`,
      value: boot.readyMs,
      unit: 'ms',
      goal: '≤ 2,000 ms',
      met: boot.readyMs <= 2000,
      from: 'spawn → "listening on" log line',
    });
    ratios.push({
      name: `resident memory${at}`,
      value: boot.rssReadyMb,
      unit: 'MB',
      goal: '< 300 MB',
      met: boot.rssReadyMb < 300,
      from:
        `VmRSS when ready; ${boot.rssAfterLoadMb.toFixed(0)} MB right after the load (peak ` +
        `${boot.peakRssMb.toFixed(0)} MB), ${boot.rssSettledMb.toFixed(0)} MB after it once idle`,
    });
  }
  return ratios;
}

export function renderMarkdown(results: BenchResults): string {
  const lines: string[] = [];
  const s = results.settings;
  lines.push('## agent-context benchmark (issues 5, 12 and 13)', '');
  lines.push(`- Command: \`${results.command}\``);
  lines.push(`- Date: ${results.date}; total ${Math.round(results.totalSeconds)} s`);
  lines.push(
    `- Machine: ${results.machine.cpu}, ${results.machine.cores} cores, ${results.machine.memoryGb.toFixed(1)} GB RAM, ` +
      `${results.machine.os}, Node ${results.machine.node}`,
  );
  lines.push(
    `- Disk: a journal commit (a 300-byte line written into a zero-filled file, then fdatasync) took ` +
      `${results.diskSync.medianUs} µs at the median, ${results.diskSync.p90Us} µs at p90 ` +
      `(${formatNumber(results.diskSync.commits)} in a row, before the loads); a sequential MCP caller waits for one per call`,
  );
  lines.push(
    `- Code: ${results.git.commit}` +
      (results.git.dirtyFiles.length
        ? ` with uncommitted changes in ${results.git.dirtyFiles.join(', ')}`
        : ' (clean)'),
  );
  lines.push(
    `- Versions: ${Object.entries(results.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  lines.push(
    `- HTTP: autocannon, ${s.connections} connections, ${s.rounds} rounds of ${s.warmupSeconds} s warm-up then ${s.seconds} s per scenario; ` +
      `${formatNumber(s.agents)} agents; NODE_ENV=production; server log level ${s.serverLogLevel} (stderr to a file). ` +
      `ops/s counts 2xx responses; latencies are of 2xx responses.`,
  );
  lines.push(
    `- MCP: SDK client over stdio, one call at a time, ${s.rounds} rounds of ${s.warmupSeconds} s warm-up then ${s.seconds} s per phase ` +
      `(server-memory: one round of ${s.seconds * s.rounds} s); ` +
      `agent-context on a fresh store of ${formatNumber(s.mcpMemories)} memories; server-memory with its graph built ` +
      `to ${formatNumber(s.peerEntities)} entities (${formatNumber(results.peerBuildMs)} ms in batches of 500).`,
  );
  const pgSetup = results.postgres;
  if (pgSetup) {
    const p = pgSetup.prefill;
    lines.push(
      `- PostgreSQL ${pgSetup.version}, at ${formatNumber(pgSetup.memories)} memories: a throwaway cluster on ` +
        `this machine (sharing its cores), ${pgSetup.durability}: a commit is on disk when acknowledged, as the ` +
        `JSON store's fdatasync makes it. Prefilled with the JSON store's data through ${p.method}: ` +
        `${formatNumber(p.writeMs)} ms (migrate ${formatNumber(p.migrateMs)} ms; then VACUUM ANALYZE and ` +
        `CHECKPOINT ${formatNumber(p.settleMs)} ms). ${pgSetup.instances.length} instances of agent-context ` +
        `serve on that database (AC_INSTANCES=${pgSetup.acInstances}, default pool), started once and ` +
        `idle when not loaded; the one-instance rows load the first. Before the rounds, each instance gets ` +
        `one unrecorded memory_retrieve load (a fresh instance measured at about half its speed for its first ` +
        `seconds of load). In each round, right after the JSON ` +
        `store's scenarios at that size: ${PG_SCENARIOS.textbookGet}, ${PG_SCENARIOS.retrieve}, ` +
        `${PG_SCENARIOS.cached}, ${PG_SCENARIOS.textbookPost}, ${PG_SCENARIOS.store}, then ` +
        `${PG_SCENARIOS.cachedTwo}: one autocannon load per instance at once, ` +
        `half the connections each, ops/s summed, p50 and p99 the larger of the two. Weather cache primed ` +
        `${pgSetup.weatherCache === 'shared' ? 'once, through the first instance (the cache is shared on the database)' : 'on each instance (no shared cache)'}. ` +
        'The textbook rows are the ceiling of issue 32: a bare Express 5 app with pg (bench/textbook-express.ts) on ' +
        'the same database with the same pool (10), doing by hand BEGIN; the account by its key FOR UPDATE; the ' +
        'memory read (or upserted); the ledger entry; the balance; COMMIT.',
    );
    lines.push(
      `- PostgreSQL instances: ${pgSetup.instances
        .map(
          (i, n) =>
            `#${n + 1} ready in ${formatNumber(i.readyMs)} ms, RSS ${i.rssReadyMb.toFixed(0)} MB, shutdown ` +
            `${formatNumber(i.shutdownMs ?? Number.NaN)} ms (exit ${i.exitCode}), ${i.errorLogLines ?? '?'} error log lines`,
        )
        .join('; ')}`,
    );
  }
  lines.push('');
  lines.push(
    `Each row: the median over ${s.rounds} rounds of ops/s, p50 and p99 (the rounds' figures after it), and the ` +
      'requests and failures of all rounds together. Rounds run one after another, each measuring the ceilings ' +
      'and then the scenarios; the store grows by the memory_store rounds.',
    '',
  );
  lines.push('| scenario | size | ops/s | p50 ms | p99 ms | requests | non-2xx / errors | ops/s by round |');
  lines.push('|---|---|---:|---:|---:|---:|---:|---|');
  // A load over several instances shows each instance's share after its sum.
  const byRound = (x: HttpResult) =>
    formatNumber(x.opsPerSec) +
    (x.instances ? ` (${x.instances.map((i) => formatNumber(i.opsPerSec)).join(' + ')})` : '');
  const groups = new Map<string, HttpResult[]>();
  for (const r of results.http) {
    const key = `${r.scenario}|${r.memories ?? ''}|${r.ceilingFor ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const withCpu = [...groups.values()].filter((rs) => rs.some((x) => x.cpu));
  for (const rs of groups.values()) {
    const r = rs[0] as HttpResult;
    const size =
      r.memories !== undefined
        ? `${formatNumber(r.memories)} memories`
        : r.ceilingFor !== undefined
          ? `— (ceiling for ${formatNumber(r.ceilingFor)})`
          : '—';
    const non2xx = rs.reduce((n, x) => n + x.non2xx, 0);
    const errors = rs.reduce((n, x) => n + x.errors, 0);
    const codes = new Map<string, number>();
    for (const x of rs)
      for (const [code, n] of Object.entries(x.statusCodes))
        if (!code.startsWith('2')) codes.set(code, (codes.get(code) ?? 0) + n);
    const timeouts = rs.reduce((n, x) => n + x.timeouts, 0);
    const detail =
      non2xx + errors
        ? `**${formatNumber(non2xx)} / ${formatNumber(errors)}** (${[...codes]
            .map(([code, n]) => `${code}: ${n}`)
            .join(', ')}${timeouts ? `, ${timeouts} timeouts` : ''})`
        : '0 / 0';
    lines.push(
      `| ${r.scenario} | ${size} | ${formatNumber(median(rs.map((x) => x.opsPerSec)))} | ` +
        `${formatMs(median(rs.map((x) => x.p50)))} | ${formatMs(median(rs.map((x) => x.p99)))} | ` +
        `${formatNumber(rs.reduce((n, x) => n + x.requests, 0))} | ${detail} | ` +
        `${rs.map(byRound).join(', ')} |`,
    );
  }
  if (withCpu.length) {
    lines.push(
      '',
      'Processor time per 2xx response, µs (the median of the rounds, each round after it): of the server process ' +
        '(the instance, or the ceiling), and of the PostgreSQL cluster’s processes together. Each is the processes’ ' +
        'time over the load’s wall time (its warm-up second included) divided by its ops/s.',
      '',
      '| scenario | size | server µs | database µs |',
      '|---|---|---:|---:|',
    );
    for (const rs of withCpu) {
      const measured = rs.filter((x) => x.cpu);
      const cell = (of: (x: HttpResult) => number | undefined) => {
        const values = measured.map(of).filter((v): v is number => v !== undefined);
        return values.length
          ? `${formatNumber(median(values))} (${values.map((v) => formatNumber(v)).join(', ')})`
          : '—';
      };
      const r = rs[0] as HttpResult;
      const size =
        r.memories !== undefined ? formatNumber(r.memories) : `ceiling, ${formatNumber(r.ceilingFor ?? 0)}`;
      lines.push(
        `| ${r.scenario} | ${size} | ${cell((x) => x.cpu?.serverUs)} | ${cell((x) => x.cpu?.databaseUs)} |`,
      );
    }
  }
  lines.push('');
  lines.push(
    '| MCP over stdio | size at the start | calls/s | p50 ms | p99 ms | calls | errors | calls/s by round |',
  );
  lines.push('|---|---|---:|---:|---:|---:|---:|---|');
  const mcpGroups = new Map<string, McpResult[]>();
  for (const r of results.mcp) mcpGroups.set(r.scenario, [...(mcpGroups.get(r.scenario) ?? []), r]);
  for (const rs of mcpGroups.values()) {
    const r = rs[0] as McpResult;
    const unit = r.scenario.startsWith('server-memory') ? 'entities' : 'memories';
    const errors = rs.reduce((n, x) => n + x.errors, 0);
    lines.push(
      `| ${r.scenario} | ${formatNumber(r.size)} ${unit} | ${formatNumber(median(rs.map((x) => x.opsPerSec)))} | ` +
        `${formatMs(median(rs.map((x) => x.p50)))} | ${formatMs(median(rs.map((x) => x.p99)))} | ` +
        `${formatNumber(rs.reduce((n, x) => n + x.calls, 0))} | ${errors ? `**${formatNumber(errors)}**` : '0'} | ` +
        `${rs.map((x) => formatNumber(x.opsPerSec)).join(', ')} |`,
    );
  }
  lines.push('');
  lines.push(
    '| memories | snapshot MB | ready ms | RSS ready MB | RSS after load MB | peak RSS MB | RSS idle after load MB | shutdown ms | error log lines |',
  );
  lines.push('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const st of results.startup) {
    lines.push(
      `| ${formatNumber(st.memories)} | ${st.snapshotMb.toFixed(1)} | ${formatNumber(st.readyMs)} | ` +
        `${st.rssReadyMb.toFixed(0)} | ${st.rssAfterLoadMb.toFixed(0)} | ${st.peakRssMb.toFixed(0)} | ` +
        `${st.rssSettledMb.toFixed(0)} | ` +
        `${formatNumber(st.shutdownMs)} (exit ${st.exitCode}) | ${st.errorLogLines} |`,
    );
  }
  lines.push('');
  lines.push('| target (issues 5, 12, 13) | measured | goal | met | from |');
  lines.push('|---|---:|---|---|---|');
  for (const ratio of results.ratios) {
    lines.push(
      `| ${ratio.name} | ${formatRatio(ratio)} | ${ratio.goal} | ${ratio.met === null ? '—' : ratio.met ? 'yes' : '**no**'} | ${ratio.from} |`,
    );
  }
  lines.push('');
  lines.push('Durability of acknowledgements is not measured here: it is the crash tests’ job.');
  if (results.problems.length) {
    lines.push('', '**Problems seen:**');
    for (const problem of results.problems) lines.push(`- ${problem}`);
  }
  return lines.join('\n');
}
