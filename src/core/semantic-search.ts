/**
 * How a ranked search orders memories (issue 31), on every store: the store's lexical ranking, refined.
 *
 * 1. The store's first FUSED lexical hits (key tier, then its text score) are the candidates, with, when
 *    semantic search has a model from AC_EMBEDDINGS_URL, the memories most similar to the query (at least
 *    the similarity floor, at most SEMANTIC_MAX, conditions met), and for the NEIGHBOUR_DEPTH best of them the
 *    memories next to it in a numbered series (`neighbourKeys`: the turns before and after a turn of a
 *    conversation).
 * 2. Each candidate's own score: its lexical score over the best lexical score of the query (0 when it does
 *    not match lexically), plus BLEND times its similarity to the query (semantic search on).
 * 3. Its score: its own, plus NEIGHBOUR_SHARE times the best own score of its neighbours. An answer is often
 *    the memory after the one that shares the question's words.
 * 4. Order: key tier (the key is the query, then keys holding it) first, then score, then lexical rank, then
 *    key. The store's lexical hits past the first FUSED follow in the store's order.
 *
 * `total` counts the lexical matches and the candidates that match otherwise (by meaning, or as a neighbour),
 * the same on every page. Measured on LoCoMo in BENCHMARKS.md (issue 31).
 */
import { meetsConditions } from './memory-conditions.js';
import { pagesByKey } from './memory-pages.js';
import type { Memory } from './model.js';
import {
  asciiLower,
  holdsTerm,
  metadataText,
  neighbourKeys,
  queryTerms,
  tierOfLowered,
} from './search-text.js';
import type { SemanticIndex } from './semantic-index.js';
import type { StorePort } from './store-port.js';
import type { MemoryHit, MemoryPage, MemoryQuery, StoreReader } from './store-reader.js';

/**
 * The lexical hits that are fused (the rest follow in the store's order): the same for every page, so that
 * pages neither repeat nor skip a memory. On LoCoMo, 30 finds as much as 200 (BENCHMARKS.md, issue 31).
 */
export const FUSED = 30;
/** The candidates, best own score first, whose neighbours are read: a neighbour of a lower one rarely rises. */
export const NEIGHBOUR_DEPTH = 10;
/**
 * The most memories a model from AC_EMBEDDINGS_URL adds to a query: the most similar, above the similarity
 * floor. The in-process model adds none (see SemanticIndex.findsAlone).
 */
export const SEMANTIC_MAX = 100;
/** The weight of the similarity (-1..1) beside the lexical score (0..1, the query's best being 1). */
export const BLEND = 1;
/** The share of its best neighbour's own score a memory gains. */
export const NEIGHBOUR_SHARE = 0.3;

/** The first UTF-16 code of each term (see `holdsTerm`). */
function initialsOf(terms: ReadonlySet<string>): Set<number> {
  return new Set([...terms].map((term) => term.charCodeAt(0)));
}

/** Whether the memory's key, value or metadata holds a word whose term is wanted. */
function holdsAnyTerm(memory: Memory, wanted: ReadonlySet<string>, initials: ReadonlySet<number>): boolean {
  if (wanted.size === 0) return false;
  return (
    holdsTerm(memory.key, wanted, initials) ||
    holdsTerm(memory.value, wanted, initials) ||
    holdsTerm(metadataText(memory.metadata), wanted, initials)
  );
}

/** Semantic search's part of one query: the query's vector, the agent's vectors, the similarity floor. */
export interface SemanticPart {
  index: SemanticIndex;
  vector: Float32Array;
  minSimilarity: number;
}

interface Candidate {
  memory: Memory;
  /** 1-based rank among the lexical hits; undefined for a memory found otherwise. */
  lexical: number | undefined;
  own: number;
  tier: number;
  score: number;
  /** Its key's neighbours (`neighbourKeys`), read once. */
  neighbours: string[];
}

function candidate(memory: Memory, own: number, lexical?: number): Candidate {
  return {
    memory,
    lexical,
    own,
    tier: 0,
    score: 0,
    neighbours: neighbourKeys(memory.key),
  };
}

/** The memories under `keys` that exist (expired or not), in one read. */
async function memoriesByKey(tx: StoreReader, agentId: string, keys: readonly string[]): Promise<Memory[]> {
  if (keys.length === 0) return [];
  return tx.getMemories(agentId, keys);
}

/** One page of a ranked query (see the module's header). */
export async function rankedSearchPage(
  tx: StoreReader,
  agentId: string,
  query: MemoryQuery & { text: string },
  semantic?: SemanticPart,
): Promise<MemoryPage> {
  const offset = query.offset ?? 0;
  const lexical = await tx.queryMemories(agentId, {
    ...query,
    offset: 0,
    limit: Math.max(offset + query.limit, FUSED),
  });
  const head = lexical.hits.slice(0, FUSED);
  const candidates = new Map<string, Candidate>();
  let best = 0;
  for (const hit of head) best = Math.max(best, hit.score ?? 0);
  best ||= 1;
  head.forEach((hit, i) => {
    candidates.set(hit.memory.key, candidate(hit.memory, (hit.score ?? 0) / best, i + 1));
  });
  const tail = lexical.hits.slice(FUSED);
  const found = async (keys: string[]) => {
    const wanted = keys.filter((key) => !candidates.has(key));
    for (const memory of await memoriesByKey(tx, agentId, wanted)) {
      if (!candidates.has(memory.key) && meetsConditions(memory, query)) {
        candidates.set(memory.key, candidate(memory, 0));
      }
    }
  };
  if (semantic?.index.findsAlone) {
    const { index, vector, minSimilarity } = semantic;
    await found(index.nearest(agentId, vector, minSimilarity, SEMANTIC_MAX).map(({ key }) => key));
  }
  const withSimilarity = (list: Candidate[]) => {
    if (!semantic || list.length === 0) return;
    const { index, vector } = semantic;
    const similarities = list.map((c) => index.similarity(agentId, c.memory, vector));
    // A memory without a vector yet (a remote model's backlog) counts as of average similarity.
    let sum = 0;
    let known = 0;
    for (const s of similarities) {
      if (s === undefined) continue;
      sum += s;
      known++;
    }
    const average = known > 0 ? sum / known : 0;
    list.forEach((c, i) => {
      c.own += BLEND * (similarities[i] ?? average);
    });
  };
  const all = [...candidates.values()];
  withSimilarity(all);
  // Neighbours are read only when a candidate's key ends in a number (a numbered series).
  if (all.some((c) => c.neighbours.length > 0)) {
    const top = all.sort((a, b) => b.own - a.own).slice(0, NEIGHBOUR_DEPTH);
    const before = candidates.size;
    await found([...new Set(top.flatMap((c) => c.neighbours))]);
    // New candidates follow the others in the map's order.
    withSimilarity([...candidates.values()].slice(before));
  }

  const ranked = [...candidates.values()];
  const wantedKey = asciiLower(query.text.trim());
  for (const c of ranked) {
    let neighbour = 0;
    for (const key of c.neighbours) {
      neighbour = Math.max(neighbour, candidates.get(key)?.own ?? 0);
    }
    c.score = c.own + NEIGHBOUR_SHARE * neighbour;
    c.tier = tierOfLowered(asciiLower(c.memory.key), wantedKey);
  }
  ranked.sort(
    (a, b) =>
      b.tier - a.tier ||
      b.score - a.score ||
      (a.lexical ?? Number.MAX_SAFE_INTEGER) - (b.lexical ?? Number.MAX_SAFE_INTEGER) ||
      (a.memory.key < b.memory.key ? -1 : 1),
  );
  // Memories found otherwise, counted besides the lexical matches (when the store gave every lexical match,
  // none of the others holds a word of the query).
  let otherwise = 0;
  const others = ranked.filter((c) => c.lexical === undefined);
  if (others.length > 0) {
    const everyMatch = lexical.hits.length >= lexical.total;
    const inTail = new Set(tail.map((hit) => hit.memory.key));
    const wanted = new Set(queryTerms(query.text));
    const initials = initialsOf(wanted);
    for (const c of others) {
      if (inTail.has(c.memory.key)) continue;
      if (everyMatch || (c.tier === 0 && !holdsAnyTerm(c.memory, wanted, initials))) otherwise++;
    }
  }
  // A ranked page's cursor is an offset: positions are not used.
  const hits = [
    ...ranked.map((c): MemoryHit => ({ memory: c.memory, score: c.score, position: '' })),
    ...tail.filter((hit) => !candidates.has(hit.memory.key)),
  ].slice(offset, offset + query.limit);
  return { hits, total: lexical.total + otherwise };
}

/** In the background: the agent's live memories this process has no vector for go to be embedded. */
export function catchUp(store: StorePort, agentId: string, index: SemanticIndex, liveAt: string): void {
  const read = async () => {
    const all: Memory[] = [];
    for await (const page of pagesByKey(store, agentId, liveAt, 1000)) all.push(...page);
    return all;
  };
  read().then(
    (all) => index.catchUp(agentId, all),
    (err: unknown) => index.reportError(err),
  );
}
