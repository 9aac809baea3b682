/**
 * `npm run bench`'s targets (issues 5, 12, 13, 28): each ratio or figure with its goal and whether it was met, and
 * how it was computed. The JSON store's scenarios against the bare Express ceilings (each paired within a round),
 * their p99s, MCP over HTTP in both eras, MCP over stdio against the peer, the start; the PostgreSQL rows' in
 * postgres-targets.ts.
 */
import type { HttpResult } from '../http/load.js';
import type { McpResult } from '../mcp/sequential-calls.js';
import { formatMs, formatNumber } from '../shared/number-format.js';
import { median } from '../shared/stats.js';
import { MCP_HTTP_SCENARIOS, MODERN_STDIO_SUFFIX, TUNED_CEILINGS } from '../suite/scenario-names.js';
import { postgresRatios } from './postgres-targets.js';
import type { Ratio, StartupResult } from './results.js';
import { perRound, ratioFrom, roundsOf } from './rounds.js';

/** 2026-07-28 may cost at most 10% of the 2025 era's throughput over HTTP. */
const MCP_ERA_GOAL = 0.9;
/** Issue 12: p99 at 50 connections for memory_store, memory_retrieve and cached data. */
const P99_GOAL_MS = 25;

/** Every target's ratio or figure, in the report's order. */
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
