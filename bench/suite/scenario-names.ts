/**
 * The names of `npm run bench`'s scenarios and ceilings beyond the JSON store's plain ones ('memory_store',
 * 'bare Express GET'…): the rows they make, and the report's ratios between them, find each other by these.
 */

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

/** MCP over HTTP (`POST /mcp`), memory_retrieve as a tool call, in one protocol era (issue 28). */
export function mcpHttpScenario(revision: string): string {
  return `MCP HTTP memory_retrieve (${revision})`;
}

/** MCP over HTTP, one scenario per protocol era. */
export const MCP_HTTP_SCENARIOS = {
  legacy: mcpHttpScenario('2025-11-25'),
  modern: mcpHttpScenario('2026-07-28'),
} as const;

/** The stdio rows of the 2026-07-28 era (the 2025 era's keep their names, 'MCP stdio memory_store'...). */
export const MODERN_STDIO_SUFFIX = ' (2026-07-28)';

/** The second ceiling: bare Express whose server makes messages with the app's prototypes (for information). */
export const TUNED_CEILINGS = {
  post: 'bare Express POST, app prototypes',
  get: 'bare Express GET, app prototypes',
} as const;
