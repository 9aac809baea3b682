/**
 * Ranked search with semantic search on (AC_EMBEDDINGS_URL): the store's lexical ranking and the memories
 * most similar to the query combined by reciprocal rank fusion (a memory's score: the sum over the two lists
 * of 1/(60 + its rank there)). The key tiers still come first. A memory found by meaning alone counts in the
 * total besides the lexical matches.
 */
import { meetsConditions } from './memory-conditions.js';
import { pagesByKey } from './memory-pages.js';
import type { Memory } from './model.js';
import { keyTier, metadataText, queryTerms, termOf, words } from './search-text.js';
import type { SemanticIndex } from './semantic-index.js';
import type { MemoryHit, MemoryPage, MemoryQuery, StorePort, StoreTx } from './store-port.js';

/** RRF's constant, as its authors use it. */
export const RRF_K = 60;
/** The most memories semantic search adds to a query: the most similar, above the similarity floor. */
export const SEMANTIC_MAX = 100;

/** Whether a store's lexical search finds `memory` for `text`: a term of it held, or the key holding it. */
export function lexicallyMatches(memory: Memory, text: string): boolean {
  if (keyTier(memory.key, text) > 0) return true;
  const wanted = new Set(queryTerms(text));
  if (wanted.size === 0) return false;
  for (const source of [memory.key, memory.value, metadataText(memory.metadata)]) {
    for (const word of words(source)) {
      const term = termOf(word);
      if (term !== null && wanted.has(term)) return true;
    }
  }
  return false;
}

interface Candidate {
  memory: Memory;
  lexical?: number;
  semantic?: number;
  tier: number;
  score: number;
}

/**
 * One page of a ranked query from the store's lexical ranking (its first hits, in order, and its total) and
 * the memories similar to the query (conditions met, most similar first). The lexical hits must reach past
 * the page by at least SEMANTIC_MAX, so that every memory ranked above a page's last is among them.
 */
export function fusedPage(
  query: MemoryQuery & { text: string },
  lexical: MemoryPage,
  similar: readonly Memory[],
): MemoryPage {
  const candidates = new Map<string, Candidate>();
  lexical.hits.forEach((hit, i) => {
    candidates.set(hit.memory.key, { memory: hit.memory, lexical: i + 1, tier: 0, score: 0 });
  });
  let byMeaningAlone = 0;
  similar.forEach((memory, i) => {
    const found = candidates.get(memory.key);
    if (found) found.semantic = i + 1;
    else candidates.set(memory.key, { memory, semantic: i + 1, tier: 0, score: 0 });
    if (!lexicallyMatches(memory, query.text)) byMeaningAlone++;
  });
  const ranked = [...candidates.values()];
  for (const c of ranked) {
    c.tier = keyTier(c.memory.key, query.text);
    c.score =
      (c.lexical === undefined ? 0 : 1 / (RRF_K + c.lexical)) +
      (c.semantic === undefined ? 0 : 1 / (RRF_K + c.semantic));
  }
  ranked.sort(
    (a, b) =>
      b.tier - a.tier ||
      b.score - a.score ||
      (a.lexical ?? Number.MAX_SAFE_INTEGER) - (b.lexical ?? Number.MAX_SAFE_INTEGER) ||
      (a.memory.key < b.memory.key ? -1 : 1),
  );
  const offset = query.offset ?? 0;
  // A ranked page's cursor is an offset: positions are not used.
  const hits = ranked
    .slice(offset, offset + query.limit)
    .map((c): MemoryHit => ({ memory: c.memory, score: c.score, position: '' }));
  return { hits, total: lexical.total + byMeaningAlone };
}

/**
 * A ranked page with semantic search: the store's lexical hits down to past the page by SEMANTIC_MAX, and
 * the agent's memories most similar to the query (at least `minSimilarity`) that meet its conditions, fused.
 */
export async function semanticPage(
  tx: StoreTx,
  agentId: string,
  query: MemoryQuery & { text: string },
  index: SemanticIndex,
  vector: Float32Array,
  minSimilarity: number,
): Promise<MemoryPage> {
  const reach = (query.offset ?? 0) + query.limit + SEMANTIC_MAX;
  const lexical = await tx.queryMemories(agentId, { ...query, offset: 0, limit: reach });
  const similar: Memory[] = [];
  for (const { key } of index.nearest(agentId, vector, minSimilarity, SEMANTIC_MAX)) {
    const memory = await tx.getMemory(agentId, key);
    if (memory && meetsConditions(memory, query)) similar.push(memory);
  }
  return fusedPage(query, lexical, similar);
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
