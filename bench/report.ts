/** The benchmark's results: the JSON written to bench/results/latest.json and the Markdown printed. */
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

export interface Ratio {
  name: string;
  value: number;
  unit: 'ratio' | 'ops/s' | 'ms' | 'MB';
  goal: string;
  met: boolean;
  /** How it was computed, e.g. "memory_store @100,000 ÷ bare POST". */
  from: string;
}

export interface BenchResults {
  date: string;
  command: string;
  machine: Machine;
  versions: Record<string, string>;
  git: { commit: string; dirtyFiles: string[] };
  settings: {
    seconds: number;
    warmupSeconds: number;
    connections: number;
    sizes: number[];
    agents: number;
    mcpMemories: number;
    peerEntities: number;
    searchLimit: number;
    serverLogLevel: string;
  };
  http: HttpResult[];
  mcp: McpResult[];
  startup: StartupResult[];
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

/** Finds a result; undefined if that scenario was not run. */
export function findHttp(results: readonly HttpResult[], scenario: string, memories: number) {
  return results.find((r) => r.scenario === scenario && (r.memories ?? r.ceilingFor) === memories);
}

export function computeRatios(
  http: readonly HttpResult[],
  mcp: readonly McpResult[],
  startup: readonly StartupResult[],
  largest: number,
): Ratio[] {
  const ratios: Ratio[] = [];
  const at = `@${formatNumber(largest)}`;
  const barePost = findHttp(http, 'bare Express POST', largest);
  const bareGet = findHttp(http, 'bare Express GET', largest);
  const store = findHttp(http, 'memory_store', largest);
  const retrieve = findHttp(http, 'memory_retrieve', largest);
  const data = findHttp(http, 'data (cached)', largest);
  if (store && barePost) {
    const value = store.opsPerSec / barePost.opsPerSec;
    ratios.push({
      name: `memory_store${at} ÷ bare POST`,
      value,
      unit: 'ratio',
      goal: '≥ 0.60',
      met: value >= 0.6,
      from: `${formatNumber(store.opsPerSec)} ÷ ${formatNumber(barePost.opsPerSec)} ops/s`,
    });
  }
  if (store) {
    ratios.push({
      name: `memory_store${at} p99`,
      value: store.p99,
      unit: 'ms',
      goal: '≤ 30 ms',
      met: store.p99 <= 30,
      from: 'autocannon, 2xx only',
    });
  }
  if (retrieve && bareGet) {
    const value = retrieve.opsPerSec / bareGet.opsPerSec;
    ratios.push({
      name: `memory_retrieve${at} ÷ bare GET`,
      value,
      unit: 'ratio',
      goal: '≥ 0.70',
      met: value >= 0.7,
      from: `${formatNumber(retrieve.opsPerSec)} ÷ ${formatNumber(bareGet.opsPerSec)} ops/s`,
    });
  }
  if (data && bareGet) {
    const value = data.opsPerSec / bareGet.opsPerSec;
    ratios.push({
      name: `cached data${at} ÷ bare GET`,
      value,
      unit: 'ratio',
      goal: '≥ 0.70',
      met: value >= 0.7,
      from: `${formatNumber(data.opsPerSec)} ÷ ${formatNumber(bareGet.opsPerSec)} ops/s`,
    });
  }
  const mcpStore = mcp.find((r) => r.scenario === 'MCP stdio memory_store');
  const peerCreate = mcp.find((r) => r.scenario === 'server-memory create_entities');
  if (mcpStore) {
    ratios.push({
      name: 'MCP stdio memory_store',
      value: mcpStore.opsPerSec,
      unit: 'ops/s',
      goal: '≥ 2,000 calls/s',
      met: mcpStore.opsPerSec >= 2000,
      from: `sequential, store of ${formatNumber(mcpStore.size)} memories`,
    });
  }
  if (mcpStore && peerCreate) {
    const value = mcpStore.opsPerSec / peerCreate.opsPerSec;
    ratios.push({
      name: `MCP stdio memory_store ÷ server-memory create_entities@${formatNumber(peerCreate.size)}`,
      value,
      unit: 'ratio',
      goal: '≥ 30',
      met: value >= 30,
      from: `${formatNumber(mcpStore.opsPerSec)} ÷ ${formatNumber(peerCreate.opsPerSec)} calls/s`,
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
  lines.push('## agent-context benchmark (issue 5)', '');
  lines.push(`- Command: \`${results.command}\``);
  lines.push(`- Date: ${results.date}; total ${Math.round(results.totalSeconds)} s`);
  lines.push(
    `- Machine: ${results.machine.cpu}, ${results.machine.cores} cores, ${results.machine.memoryGb.toFixed(1)} GB RAM, ` +
      `${results.machine.os}, Node ${results.machine.node}`,
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
    `- HTTP: autocannon, ${s.connections} connections, ${s.warmupSeconds} s warm-up then ${s.seconds} s per scenario; ` +
      `${formatNumber(s.agents)} agents; NODE_ENV=production; server log level ${s.serverLogLevel} (stderr to a file). ` +
      `ops/s counts 2xx responses; latencies are of 2xx responses.`,
  );
  lines.push(
    `- MCP: SDK client over stdio, one call at a time, ${s.warmupSeconds} s warm-up then ${s.seconds} s per phase; ` +
      `agent-context on a fresh store of ${formatNumber(s.mcpMemories)} memories; server-memory with its graph built ` +
      `to ${formatNumber(s.peerEntities)} entities (${formatNumber(results.peerBuildMs)} ms in batches of 500).`,
  );
  lines.push('');
  lines.push('| scenario | size | ops/s | p50 ms | p99 ms | requests | non-2xx / errors |');
  lines.push('|---|---|---:|---:|---:|---:|---:|');
  for (const r of results.http) {
    const size =
      r.memories !== undefined
        ? `${formatNumber(r.memories)} memories`
        : r.ceilingFor !== undefined
          ? `— (ceiling for ${formatNumber(r.ceilingFor)})`
          : '—';
    const bad = r.non2xx + r.errors;
    const detail = bad
      ? `**${formatNumber(r.non2xx)} / ${formatNumber(r.errors)}** (${Object.entries(r.statusCodes)
          .filter(([code]) => !code.startsWith('2'))
          .map(([code, n]) => `${code}: ${n}`)
          .join(', ')}${r.timeouts ? `, ${r.timeouts} timeouts` : ''})`
      : '0 / 0';
    lines.push(
      `| ${r.scenario} | ${size} | ${formatNumber(r.opsPerSec)} | ${formatMs(r.p50)} | ${formatMs(r.p99)} | ` +
        `${formatNumber(r.requests)} | ${detail} |`,
    );
  }
  for (const r of results.mcp) {
    const unit = r.scenario.startsWith('server-memory') ? 'entities' : 'memories';
    lines.push(
      `| ${r.scenario} | ${formatNumber(r.size)} ${unit} | ${formatNumber(r.opsPerSec)} | ${formatMs(r.p50)} | ` +
        `${formatMs(r.p99)} | ${formatNumber(r.calls)} | ${r.errors ? `**0 / ${formatNumber(r.errors)}**` : '0 / 0'} |`,
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
  lines.push('| target (issue 5) | measured | goal | met | from |');
  lines.push('|---|---:|---|---|---|');
  for (const ratio of results.ratios) {
    lines.push(
      `| ${ratio.name} | ${formatRatio(ratio)} | ${ratio.goal} | ${ratio.met ? 'yes' : '**no**'} | ${ratio.from} |`,
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
