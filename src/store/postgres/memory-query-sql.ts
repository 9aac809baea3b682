/**
 * memory queries on PostgreSQL: the conditions as SQL, the unranked page in update order (keyset on
 * update_seq), the ranked page (key tier, then a BM25-like score over the search column, then recency) at an offset,
 * and the total. One statement text per combination of conditions, each prepared once.
 */
import { AppError } from '../../core/errors.js';
import type { Memory } from '../../core/model.js';
import { asciiLower, metadataText, queryTerms, termText } from '../../core/search-text.js';
import type { MemoryQuery } from '../../core/store-reader.js';
import { MEMORY_COLUMNS } from './postgres-rows.js';

export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * JSON text as metadata_index reads it (migration 0005): its \u0000 escapes as \ufffd, since jsonb refuses
 * NUL. The same plain replacement on both sides keeps equal values equal.
 */
export function jsonWithoutNul(json: string): string {
  return json.replaceAll('\\u0000', '\\ufffd');
}

/**
 * The search column of a memory from the terms (search-text.ts) of its key, value and metadata values, as
 * SQL over three parameters: weighted A, B and C, read by the 'simple' configuration, which keeps each term
 * as it is (they are runs of letters and digits, already lowercased and stemmed).
 */
export const SEARCH_VECTOR = (key: string, value: string, metadata: string) =>
  `setweight(to_tsvector('simple', ${key}), 'A') || setweight(to_tsvector('simple', ${value}), 'B') || ` +
  `setweight(to_tsvector('simple', ${metadata}), 'C')`;

/** The three term texts SEARCH_VECTOR reads, for `memory`. */
export function searchTermsOf(memory: Pick<Memory, 'key' | 'value' | 'metadata'>): [string, string, string] {
  return [termText(memory.key), termText(memory.value), termText(metadataText(memory.metadata))];
}

/**
 * The OR of the query's terms: plainto_tsquery joins them with AND (&), and a term never holds &, so
 * swapping the operator makes it OR, as BM25 over the JSON store ranks.
 */
const OR_QUERY = "(SELECT replace(plainto_tsquery('simple', $3)::text, '&', '|')::tsquery AS q) AS t";

/**
 * Each query term's weight, as BM25 weighs it (issue 31): ln(1 + (N - n + 0.5) / (n + 0.5)), n of the agent's
 * N live memories holding it, so that a rare word counts more than one most memories hold (a speaker's name
 * in every turn of a conversation). `terms` is the parameter holding the query's terms.
 */
const termWeights = (terms: string) =>
  "SELECT to_tsquery('simple', term) AS q, " +
  'ln(1 + (all_live.n - holding.n + 0.5) / (holding.n + 0.5)) AS idf ' +
  `FROM unnest(${terms}::text[]) AS term, ` +
  '(SELECT count(*)::float8 AS n FROM memories WHERE agent_id = $1 AND (expires_at IS NULL OR expires_at > $2)) AS all_live, ' +
  "LATERAL (SELECT count(*)::float8 AS n FROM memories WHERE agent_id = $1 AND (expires_at IS NULL OR expires_at > $2) AND search @@ to_tsquery('simple', term)) AS holding";

/**
 * The ranked page's score, close to the JSON store's BM25+: per query term, its weight times ts_rank of the
 * term alone (the key's terms weigh most, then the value's, then the metadata's; no length normalisation:
 * dividing by the log of the length put long runbooks below their drafts), summed, times the number of the
 * query's terms the memory holds. The weights are computed once per query (MATERIALIZED), not per row.
 */
const BM25_LIKE =
  '(SELECT coalesce(sum(w.idf * ts_rank(search, w.q)), 0) * count(*) FILTER (WHERE search @@ w.q) FROM weights AS w)';

function conditions(agentId: string, query: MemoryQuery): { where: string; values: unknown[] } {
  const values: unknown[] = [agentId, query.liveAt];
  const where = ['agent_id = $1', '(expires_at IS NULL OR expires_at > $2)'];
  if (query.text !== undefined) {
    // $3 the query's terms, $4 its ASCII-lowercased text for the key tiers (lower() of a "C" key lowers
    // ASCII only).
    values.push(queryTerms(query.text).join(' '), asciiLower(query.text.trim()));
    where.push('(search @@ t.q OR strpos(lower(key), $4) > 0)');
  }
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  if (query.types) where.push(`type = ANY(${param(query.types)}::text[])`);
  if (query.metadata && Object.keys(query.metadata).length > 0) {
    where.push(`metadata_index @> ${param(jsonWithoutNul(JSON.stringify(query.metadata)))}::jsonb`);
  }
  if (query.updatedAfter !== undefined) where.push(`updated_at > ${param(query.updatedAfter)}`);
  if (query.updatedBefore !== undefined) where.push(`updated_at < ${param(query.updatedBefore)}`);
  if (query.keyPrefix !== undefined) where.push(`starts_with(key, ${param(query.keyPrefix)})`);
  return { where: where.join(' AND '), values };
}

function readPosition(position: string): string {
  if (/^[1-9]\d{0,18}$/.test(position)) return position;
  throw new AppError(
    'invalid_input',
    'cursor is not one this service gave: pass next_cursor from the previous answer as it is, or start again without it.',
    { field: 'cursor' },
  );
}

/** The statements of one page of `query` and of its total. */
export function memoryQueryStatements(
  agentId: string,
  query: MemoryQuery,
): { page: Statement; count: Statement } {
  const { where, values } = conditions(agentId, query);
  const from = query.text === undefined ? 'memories' : `memories, ${OR_QUERY}`;
  const count = { text: `SELECT count(*) AS n FROM ${from} WHERE ${where}`, values };
  const page = [...values];
  const param = (value: unknown) => {
    page.push(value);
    return `$${page.length}`;
  };
  if (query.text === undefined) {
    const after =
      query.after === undefined ? '' : ` AND update_seq < ${param(readPosition(query.after))}::bigint`;
    return {
      page: {
        text:
          `SELECT ${MEMORY_COLUMNS}, update_seq FROM ${from} WHERE ${where}${after} ` +
          `ORDER BY update_seq DESC LIMIT ${param(query.limit)}`,
        values: page,
      },
      count,
    };
  }
  const terms = param(queryTerms(query.text));
  return {
    page: {
      text:
        `WITH weights AS MATERIALIZED (${termWeights(terms)}) ` +
        `SELECT ${MEMORY_COLUMNS}, update_seq, ${BM25_LIKE} AS score, ` +
        'CASE WHEN lower(key) = $4 THEN 2 WHEN strpos(lower(key), $4) > 0 THEN 1 ELSE 0 END AS tier ' +
        `FROM ${from} WHERE ${where} ORDER BY tier DESC, score DESC, update_seq DESC ` +
        `LIMIT ${param(query.limit)} OFFSET ${param(query.offset ?? 0)}`,
      values: page,
    },
    count,
  };
}
