/**
 * What the tools that look inside one scenario's load share (`bench:profile`, `bench:gc`): the scenarios they
 * can drive, and their numeric settings from the environment.
 */

import {
  cachedDataRequests,
  mcpRetrieveRequests,
  memoryRetrieveRequests,
  memorySearchRequests,
  memoryStoreRequests,
} from './http-load.js';
import type { BenchAgent } from './prefill.js';

export const SCENARIOS = {
  memory_retrieve: memoryRetrieveRequests,
  memory_store: memoryStoreRequests,
  memory_search: memorySearchRequests,
  data: cachedDataRequests,
  mcp_2025: (agents: readonly BenchAgent[]) => mcpRetrieveRequests(agents, '2025-11-25'),
  mcp_2026: (agents: readonly BenchAgent[]) => mcpRetrieveRequests(agents, '2026-07-28'),
} as const;

export type ScenarioName = keyof typeof SCENARIOS;

/** The scenario named in the environment variable `name` (memory_retrieve when unset). */
export function scenarioSetting(name: string): {
  scenario: ScenarioName;
  requestsFor: (typeof SCENARIOS)[ScenarioName];
} {
  const scenario = (process.env[name] || 'memory_retrieve') as ScenarioName;
  if (!Object.hasOwn(SCENARIOS, scenario))
    throw new Error(`${name} must be one of ${Object.keys(SCENARIOS).join(', ')}.`);
  return { scenario, requestsFor: SCENARIOS[scenario] };
}

/** A positive number from the environment variable `name`, or `fallback` when unset. */
export function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 1)
    throw new Error(`${name} must be a positive number, got "${raw}".`);
  return value;
}
