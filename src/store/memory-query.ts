/**
 * memory queries over one agent's memories held in memory (the JSON store and a transaction's overlay):
 * conditions, the unranked order (most recently updated first) continued after a position, and the ranked
 * order (key tier, then the index's BM25+ score, then recency) continued at an offset.
 */
import { AppError } from '../core/errors.js';
import { isLive, type Memory } from '../core/model.js';
import type { MemoryHit, MemoryPage, MemoryQuery, MetadataScalar } from '../core/store-port.js';
import type { MemorySearchIndex } from './memory-search-index.js';

/** Whether `memory` meets every condition of `query` (all but the text). */
export function meetsConditions(memory: Memory, query: MemoryQuery): boolean {
  if (!isLive(memory, query.liveAt)) return false;
  if (query.types && !query.types.includes(memory.type)) return false;
  if (query.keyPrefix !== undefined && !memory.key.startsWith(query.keyPrefix)) return false;
  if (query.updatedAfter !== undefined && !(memory.updatedAt > query.updatedAfter)) return false;
  if (query.updatedBefore !== undefined && !(memory.updatedAt < query.updatedBefore)) return false;
  for (const [field, wanted] of Object.entries(query.metadata ?? {})) {
    if (!Object.hasOwn(memory.metadata, field)) return false;
    if ((memory.metadata[field] as MetadataScalar) !== wanted) return false;
  }
  return true;
}

/** A memory's place in the unranked order, as a cursor carries it: when it was updated, and its key. */
function positionOf(memory: Memory): string {
  return JSON.stringify([memory.updatedAt, memory.key]);
}

function readPosition(position: string): [string, string] {
  try {
    const parsed: unknown = JSON.parse(position);
    if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((part) => typeof part === 'string')) {
      return parsed as [string, string];
    }
  } catch {
    // answered below
  }
  throw new AppError(
    'invalid_input',
    'cursor is not one this service gave: pass next_cursor from the previous answer as it is, or start again without it.',
    { field: 'cursor' },
  );
}

/**
 * Where a page after `position` starts in `newestFirst`: just after that memory if it is still where it was;
 * else (it was updated or deleted since) at the first memory updated before it.
 */
function startAfter(newestFirst: readonly Memory[], position: string): number {
  const [updatedAt, key] = readPosition(position);
  const at = newestFirst.findIndex((m) => m.key === key && m.updatedAt === updatedAt);
  if (at >= 0) return at + 1;
  const older = newestFirst.findIndex((m) => m.updatedAt < updatedAt);
  return older < 0 ? newestFirst.length : older;
}

/** One page of an unranked `query` over an agent's memories given oldest first (in update order). */
export function listPage(oldestFirst: Iterable<Memory>, query: MemoryQuery): MemoryPage {
  const newestFirst = [...oldestFirst].reverse();
  const matched = newestFirst.filter((memory) => meetsConditions(memory, query));
  const start = query.after === undefined ? 0 : startAfter(matched, query.after);
  const hits = matched
    .slice(start, start + query.limit)
    .map((memory): MemoryHit => ({ memory, position: positionOf(memory) }));
  return { hits, total: matched.length };
}

/**
 * One page of a ranked `query` (it has text) over an agent's memories, found by `index` and read by key
 * with `memoryOf`: key tier, then score, then the most recently updated (ties of one millisecond by key).
 */
export function rankedPage(
  query: MemoryQuery & { text: string },
  index: MemorySearchIndex,
  memoryOf: (key: string) => Memory | undefined,
): MemoryPage {
  const scores = index.search(query.text);
  const tiers = index.keyTiers(query.text);
  const ranked: Ranked[] = [];
  const consider = (key: string) => {
    const memory = memoryOf(key);
    if (!memory || !meetsConditions(memory, query)) return;
    ranked.push({ memory, tier: tiers.get(key) ?? 0, score: scores.get(key) ?? 0 });
  };
  for (const key of scores.keys()) consider(key);
  for (const key of tiers.keys()) if (!scores.has(key)) consider(key);
  const offset = query.offset ?? 0;
  const hits = firstRanked(ranked, offset + query.limit)
    .slice(offset)
    .map(({ memory, score }): MemoryHit => ({ memory, score, position: positionOf(memory) }));
  return { hits, total: ranked.length };
}

interface Ranked {
  memory: Memory;
  tier: number;
  score: number;
}

/** Best first: key tier, score, the most recently updated, then by key. */
function byRank(a: Ranked, b: Ranked): number {
  return (
    b.tier - a.tier ||
    b.score - a.score ||
    (a.memory.updatedAt < b.memory.updatedAt ? 1 : a.memory.updatedAt > b.memory.updatedAt ? -1 : 0) ||
    (a.memory.key < b.memory.key ? -1 : 1)
  );
}

/**
 * The first `k` of `items` by rank, in order: a selection kept sorted by insertion when `k` is small against
 * the matches (a page of a common word's hundreds), else a full sort.
 */
function firstRanked(items: Ranked[], k: number): Ranked[] {
  if (k > 256 || items.length <= 4 * k) return items.sort(byRank).slice(0, k);
  const top: Ranked[] = [];
  for (const item of items) {
    if (top.length === k && byRank(item, top[k - 1] as Ranked) >= 0) continue;
    let lo = 0;
    let hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (byRank(top[mid] as Ranked, item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, item);
    if (top.length > k) top.pop();
  }
  return top;
}

/**
 * One page of `query` over an agent's memories: given oldest first (in update order) for a listing; found
 * through the agent's search index (`index`, asked for only then) for a ranked query.
 */
export function runMemoryQuery(
  memories: Iterable<Memory>,
  query: MemoryQuery,
  index: () => MemorySearchIndex,
  memoryOf: (key: string) => Memory | undefined,
): MemoryPage {
  return query.text === undefined
    ? listPage(memories, query)
    : rankedPage({ ...query, text: query.text }, index(), memoryOf);
}
