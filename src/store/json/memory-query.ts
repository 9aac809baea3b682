/**
 * memory queries over one agent's memories held in memory (the JSON store and a transaction's overlay):
 * conditions, the unranked order (most recently updated first) continued after a position, and the ranked
 * order (key tier, then the index's BM25+ score, then recency) continued at an offset.
 */
import { AppError } from '../../core/errors.js';
import { conditionsOf, filterOf } from '../../core/memory-conditions.js';
import type { Memory } from '../../core/model.js';
import type { MemoryHit, MemoryPage, MemoryQuery } from '../../core/store-reader.js';
import type { MemorySearchIndex } from './memory-search-index.js';

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
  const matched = newestFirst.filter(conditionsOf(query));
  const start = query.after === undefined ? 0 : startAfter(matched, query.after);
  const hits = matched
    .slice(start, start + query.limit)
    .map((memory): MemoryHit => ({ memory, position: positionOf(memory) }));
  return { hits, total: matched.length };
}

/**
 * One page of a ranked `query` (it has text) over an agent's memories, found and ranked by `index`: key
 * tier, then score, then the most recently updated (ties of one millisecond by key).
 */
export function rankedPage(query: MemoryQuery & { text: string }, index: MemorySearchIndex): MemoryPage {
  const offset = query.offset ?? 0;
  const { top, total } = index.rank(
    query.text,
    { liveAt: query.liveAt, filter: filterOf(query) },
    offset + query.limit,
  );
  const hits = top
    .slice(offset)
    .map(({ memory, score }): MemoryHit => ({ memory, score, position: positionOf(memory) }));
  return { hits, total };
}

/**
 * One page of `query` over an agent's memories: given oldest first (in update order) for a listing; found
 * through the agent's search index (`index`, asked for only then) for a ranked query.
 */
export function runMemoryQuery(
  memories: Iterable<Memory>,
  query: MemoryQuery,
  index: () => MemorySearchIndex,
): MemoryPage {
  return query.text === undefined
    ? listPage(memories, query)
    : rankedPage({ ...query, text: query.text }, index());
}
