/**
 * memory_search's input as a store query, its cursor, and its hits as the answer shows them. A cursor is
 * opaque to the caller: base64url JSON of where the next page starts (the store's position after the last
 * hit, or with a query the number of hits already given) and a fingerprint of the query and filter it
 * belongs to, so that a cursor passed with another search is refused instead of silently paging wrong.
 */
import { createHash } from 'node:crypto';
import { AppError } from './errors.js';
import { toMemoryView } from './memory-views.js';
import type { MemoryType } from './model.js';
import type { Input, Output } from './schemas.js';
import { queryTerms, snippetOf } from './search-text.js';
import type { MemoryHit, MemoryPage, MemoryQuery } from './store-reader.js';

type SearchInput = Input<'SearchInput'>;

/** The search's conditions as a store query, for `limit` hits from the cursor's page on. */
export function toMemoryQuery(input: SearchInput, liveAt: string): MemoryQuery {
  const { filter } = input;
  let types: MemoryType[] | undefined = filter?.memory_types;
  if (input.memory_type !== undefined) {
    types = types ? types.filter((type) => type === input.memory_type) : [input.memory_type];
  }
  const query: MemoryQuery = {
    liveAt,
    // One more than the page holds, to know whether another page follows.
    limit: input.limit + 1,
    ...(types ? { types } : {}),
    ...(filter?.metadata ? { metadata: filter.metadata } : {}),
    ...(filter?.updated_after ? { updatedAfter: new Date(filter.updated_after).toISOString() } : {}),
    ...(filter?.updated_before ? { updatedBefore: new Date(filter.updated_before).toISOString() } : {}),
    ...(filter?.key_prefix !== undefined ? { keyPrefix: filter.key_prefix } : {}),
    ...(input.query !== undefined ? { text: input.query } : {}),
  };
  if (input.cursor === undefined) return query;
  const page = readCursor(input.cursor, fingerprintOf(input));
  return { ...query, ...page };
}

interface CursorBody {
  /** The fingerprint of the search it continues. */
  f: string;
  /** Unranked: the store's position of the last hit given. */
  p?: string;
  /** Ranked: how many hits were given. */
  o?: number;
}

/** What a cursor belongs to: the query and the conditions (not the limit, which may change per page). */
function fingerprintOf(input: SearchInput): string {
  const { memory_type, query, filter } = input;
  return createHash('sha256')
    .update(JSON.stringify([memory_type ?? null, query ?? null, filter ?? null]))
    .digest('base64url')
    .slice(0, 16);
}

function badCursor(why: string): AppError {
  return new AppError(
    'invalid_input',
    `cursor ${why}: pass next_cursor from the previous answer as it is, with the same query and filter, or ` +
      'start again without a cursor. Nothing was charged.',
    { field: 'cursor' },
  );
}

function readCursor(cursor: string, fingerprint: string): Pick<MemoryQuery, 'after' | 'offset'> {
  let body: CursorBody;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorBody;
  } catch {
    throw badCursor('is not one this service gave');
  }
  if (typeof body !== 'object' || body === null || typeof body.f !== 'string') {
    throw badCursor('is not one this service gave');
  }
  if (body.f !== fingerprint) throw badCursor('belongs to another search (its query or filter differ)');
  if (typeof body.p === 'string') return { after: body.p };
  if (Number.isSafeInteger(body.o) && (body.o as number) > 0) return { offset: body.o as number };
  throw badCursor('is not one this service gave');
}

/** The cursor of the page after `hits` (the page given), or null when no page follows. */
function nextCursor(input: SearchInput, query: MemoryQuery, hits: MemoryHit[], more: boolean): string | null {
  const last = hits.at(-1);
  if (!more || !last) return null;
  const body: CursorBody =
    query.text === undefined
      ? { f: fingerprintOf(input), p: last.position }
      : { f: fingerprintOf(input), o: (query.offset ?? 0) + hits.length };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

/** The answer's page: memories (with score and snippet when ranked), count, total and next_cursor. */
export function searchAnswer(
  input: SearchInput,
  query: MemoryQuery,
  page: MemoryPage,
): Pick<Output<'SearchOutput'>, 'memories' | 'count' | 'total' | 'next_cursor'> {
  const terms = query.text === undefined ? [] : queryTerms(query.text);
  const view = (hit: MemoryHit) =>
    query.text === undefined
      ? toMemoryView(hit.memory)
      : {
          ...toMemoryView(hit.memory),
          score: Math.round((hit.score ?? 0) * 10_000) / 10_000,
          snippet: snippetOf(hit.memory.value, terms),
        };
  const hits = page.hits.slice(0, input.limit);
  return {
    memories: hits.map(view),
    count: hits.length,
    total: page.total,
    next_cursor: nextCursor(input, query, hits, page.hits.length > input.limit),
  };
}
