/**
 * The report's tables, one row per line of Markdown: the HTTP rows (each the median of its rounds), MCP over
 * stdio, the server's start and memory at each size, and the targets.
 */
import type { HttpResult } from '../http/load.js';
import type { McpResult } from '../mcp/sequential-calls.js';
import { formatMs, formatNumber } from '../shared/number-format.js';
import { median } from '../shared/stats.js';
import type { Ratio, StartupResult } from './results.js';

/** The HTTP rows (`rows`: each row's rounds, rounds.ts's rowsOf) after a paragraph on how they were made. */
export function httpTable(rows: readonly HttpResult[][], rounds: number): string[] {
  const lines = [
    `Each row: the median over ${rounds} rounds of ops/s, p50 and p99 (the rounds' figures after it), and the ` +
      'requests and failures of all rounds together. Rounds run one after another, each measuring the ceilings ' +
      'and then the scenarios; the store grows by the memory_store rounds.',
    '',
    '| scenario | size | ops/s | p50 ms | p99 ms | requests | non-2xx / errors | ops/s by round |',
    '|---|---|---:|---:|---:|---:|---:|---|',
  ];
  // A load over several instances shows each instance's share after its sum.
  const byRound = (x: HttpResult) =>
    formatNumber(x.opsPerSec) +
    (x.instances ? ` (${x.instances.map((i) => formatNumber(i.opsPerSec)).join(' + ')})` : '');
  for (const rs of rows) {
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
  return lines;
}

/** MCP over stdio: one row per scenario, the median of its rounds. */
export function mcpTable(mcp: readonly McpResult[]): string[] {
  const lines = [
    '| MCP over stdio | size at the start | calls/s | p50 ms | p99 ms | calls | errors | calls/s by round |',
    '|---|---|---:|---:|---:|---:|---:|---|',
  ];
  const groups = new Map<string, McpResult[]>();
  for (const r of mcp) groups.set(r.scenario, [...(groups.get(r.scenario) ?? []), r]);
  for (const rs of groups.values()) {
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
  return lines;
}

/** The JSON store's server at each size: its start, memory and stop. */
export function startupTable(startup: readonly StartupResult[]): string[] {
  const lines = [
    '| memories | snapshot MB | ready ms | RSS ready MB | RSS after load MB | peak RSS MB | RSS idle after load MB | shutdown ms | error log lines |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const st of startup) {
    lines.push(
      `| ${formatNumber(st.memories)} | ${st.snapshotMb.toFixed(1)} | ${formatNumber(st.readyMs)} | ` +
        `${st.rssReadyMb.toFixed(0)} | ${st.rssAfterLoadMb.toFixed(0)} | ${st.peakRssMb.toFixed(0)} | ` +
        `${st.rssSettledMb.toFixed(0)} | ` +
        `${formatNumber(st.shutdownMs)} (exit ${st.exitCode}) | ${st.errorLogLines} |`,
    );
  }
  return lines;
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

/** The targets (targets.ts): each measured against its goal. */
export function targetsTable(ratios: readonly Ratio[]): string[] {
  const lines = ['| target (issues 5, 12, 13) | measured | goal | met | from |', '|---|---:|---|---|---|'];
  for (const ratio of ratios) {
    lines.push(
      `| ${ratio.name} | ${formatRatio(ratio)} | ${ratio.goal} | ${ratio.met === null ? '—' : ratio.met ? 'yes' : '**no**'} | ${ratio.from} |`,
    );
  }
  return lines;
}
