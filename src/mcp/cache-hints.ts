/**
 * The cache hints of the 2026-07-28 revision (`ttlMs`, `cacheScope`), chosen to be true:
 * - What the operation table makes (the tools, the prompt, the resource templates, server/discover) is the
 *   same for every caller and cannot change while the process runs: `public`, for an hour (a restart with a
 *   new version is the only change, and an hour is how stale a client may be after one).
 * - resources/list names the caller's own memories, which its next memory_store changes; every resources/read
 *   (account, usage, a memory, the export) is the caller's own and changes with its next charged call:
 *   `private`, `ttlMs: 0` (revalidate every time: a cached balance or memory would be a wrong one).
 * The 2025 revisions carry no hints; the SDK adds these to 2026-07-28 answers only.
 */
import type { CacheHint, ServerOptions } from '@modelcontextprotocol/server';

/** How long a client may keep what the operation table makes. */
export const TABLE_TTL_MS = 60 * 60 * 1000;

const TABLE: CacheHint = { ttlMs: TABLE_TTL_MS, cacheScope: 'public' };

/** A read of the calling agent's own data. */
export const AGENT_READ: CacheHint = { ttlMs: 0, cacheScope: 'private' };

export const CACHE_HINTS: NonNullable<ServerOptions['cacheHints']> = {
  'server/discover': TABLE,
  'tools/list': TABLE,
  'prompts/list': TABLE,
  'resources/templates/list': TABLE,
  'resources/list': AGENT_READ,
  'resources/read': AGENT_READ,
};
