/**
 * The ranked-search index of one agent's memories in the JSON store: MiniSearch (BM25+) over the key, the
 * value and the metadata's values, with the terms of search-text.ts (Porter2 stems, English stop words
 * dropped), and each key in ASCII lower case for the key tiers. The state keeps it in step with the agent's
 * memories change by change, removing a replaced memory's terms by its old document (no lazy discards to
 * vacuum later).
 */
import MiniSearch from 'minisearch';
import type { Memory } from '../core/model.js';
import { asciiLower, metadataText, termOf, words } from '../core/search-text.js';

interface Indexed {
  id: string;
  key: string;
  value: string;
  meta: string;
}

/**
 * Field weights: a word of the key counts most, then the value, then metadata, as PostgreSQL weighs them
 * (A, B, C).
 */
const BOOST = { key: 2.5, value: 1, meta: 0.5 };

const toDocument = (memory: Memory): Indexed => ({
  id: memory.key,
  key: memory.key,
  value: memory.value,
  meta: metadataText(memory.metadata),
});

export class MemorySearchIndex {
  private readonly index = new MiniSearch<Indexed>({
    fields: ['key', 'value', 'meta'],
    storeFields: [],
    tokenize: words,
    processTerm: termOf,
    searchOptions: { tokenize: words, processTerm: termOf, combineWith: 'OR', boost: BOOST },
  });
  /** Each key in ASCII lower case, for the key tiers. */
  private readonly lowerKeys = new Map<string, string>();

  constructor(memories: Iterable<Memory>) {
    const documents: Indexed[] = [];
    for (const memory of memories) {
      documents.push(toDocument(memory));
      this.lowerKeys.set(memory.key, asciiLower(memory.key));
    }
    this.index.addAll(documents);
  }

  /** Indexes `memory` in place of `previous`, the memory its key held (as it was indexed), if any. */
  put(memory: Memory, previous: Memory | undefined): void {
    if (previous) this.remove(previous);
    this.index.add(toDocument(memory));
    this.lowerKeys.set(memory.key, asciiLower(memory.key));
  }

  /** Removes `memory`, as it was indexed. */
  remove(memory: Memory): void {
    if (!this.index.has(memory.key)) return;
    this.index.remove(toDocument(memory));
    this.lowerKeys.delete(memory.key);
  }

  /** The keys whose memories hold a term of `text`, with their BM25+ scores. */
  search(text: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const result of this.index.search(text)) out.set(result.id as string, result.score);
    return out;
  }

  /** The keys that are `text` (2) or hold it (1), ASCII case ignored. */
  keyTiers(text: string): Map<string, 1 | 2> {
    const out = new Map<string, 1 | 2>();
    const wanted = asciiLower(text.trim());
    if (wanted === '') return out;
    for (const [key, lower] of this.lowerKeys) {
      if (lower === wanted) out.set(key, 2);
      else if (lower.includes(wanted)) out.set(key, 1);
    }
    return out;
  }
}
