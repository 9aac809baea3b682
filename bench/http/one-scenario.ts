/**
 * What the tools that look inside one scenario's load share (`bench:profile`, `bench:gc`): the scenarios they
 * can drive, one of them named in the environment.
 */

import type { BenchAgent } from '../shared/prefill.js';
import {
  cachedDataRequests,
  mcpRetrieveRequests,
  memoryRetrieveRequests,
  memorySearchRequests,
  memoryStoreRequests,
} from './requests.js';

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
