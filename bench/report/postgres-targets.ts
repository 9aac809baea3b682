/**
 * The PostgreSQL rows' targets (issues 13 and 32): each scenario on PostgreSQL against the JSON store's, against
 * the textbook Express + pg ceiling, and two instances against one; with their p99s, shown.
 */
import type { HttpResult } from '../http/load.js';
import { formatMs, formatNumber } from '../shared/number-format.js';
import { median } from '../shared/stats.js';
import { PG_SCENARIOS } from '../suite/scenario-names.js';
import type { Ratio } from './results.js';
import { perRound, ratioFrom, roundsOf } from './rounds.js';

/** Issue 13: one instance on PostgreSQL against the JSON store, and two instances against one. */
const PG_VS_JSON_GOAL = 0.5;
const PG_TWO_VS_ONE_GOAL = 1.3;

/** Issue 13's ratios: each PostgreSQL scenario ÷ the JSON store's, two instances ÷ one, and their p99s. */
export function postgresRatios(http: readonly HttpResult[], largest: number): Ratio[] {
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
