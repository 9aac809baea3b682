/**
 * A scenario's rounds in the results: picked by scenario and size, paired round by round with a ceiling's (the
 * ratios are of measurements minutes apart at most), and grouped into the report's rows.
 */
import type { HttpResult } from '../http/load.js';
import { formatNumber } from '../shared/number-format.js';
import { median } from '../shared/stats.js';

/** A scenario's results at a store size, one per round, in round order. */
export function roundsOf(results: readonly HttpResult[], scenario: string, memories: number): HttpResult[] {
  return results
    .filter((r) => r.scenario === scenario && (r.memories ?? r.ceilingFor) === memories)
    .sort((x, y) => x.round - y.round);
}

/** The ratio of a scenario to its ceiling in each round (paired by round), and their median. */
export function perRound(http: readonly HttpResult[], scenario: string, ceiling: string, memories: number) {
  const ceilings = new Map(roundsOf(http, ceiling, memories).map((r) => [r.round, r]));
  const pairs = roundsOf(http, scenario, memories).flatMap((r) => {
    const c = ceilings.get(r.round);
    return c
      ? [{ round: r.round, ratio: r.opsPerSec / c.opsPerSec, ops: r.opsPerSec, ceiling: c.opsPerSec }]
      : [];
  });
  return { pairs, median: median(pairs.map((p) => p.ratio)) };
}

/** How a median of per-round ratios was made: each round's ratio and its two throughputs. */
export function ratioFrom(pairs: ReturnType<typeof perRound>['pairs'], unit: string): string {
  const each = pairs
    .map((p) => `${p.ratio.toFixed(2)} (${formatNumber(p.ops)} ÷ ${formatNumber(p.ceiling)})`)
    .join(', ');
  return `median of ${pairs.length} rounds, each ${unit} ops/s in one round: ${each}`;
}

/** The report's rows: the results grouped by scenario and size (each group a row's rounds), in first-seen order. */
export function rowsOf(http: readonly HttpResult[]): HttpResult[][] {
  const groups = new Map<string, HttpResult[]>();
  for (const r of http) {
    const key = `${r.scenario}|${r.memories ?? ''}|${r.ceilingFor ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()];
}
