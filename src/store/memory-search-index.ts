/**
 * The ranked-search index of one agent's memories in the JSON store: MiniSearch (BM25+) over the key, the
 * value and the metadata's values, with the terms of search-text.ts (Porter2 stems, English stop words
 * dropped). It is kept in step with the agent's memories by the state, change by change.
 */
import MiniSearch from 'minisearch';
import type { Memory } from '../core/model.js';
import { metadataText, termOf, words } from '../core/search-text.js';

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

  constructor(memories: Iterable<Memory>) {
    this.index.addAll([...memories].map(toDocument));
  }

  put(memory: Memory): void {
    const document = toDocument(memory);
    if (this.index.has(document.id)) this.index.replace(document);
    else this.index.add(document);
  }

  remove(key: string): void {
    if (this.index.has(key)) this.index.discard(key);
  }

  /** The keys whose memories hold a term of `text`, with their BM25+ scores. */
  search(text: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const result of this.index.search(text)) out.set(result.id as string, result.score);
    return out;
  }
}
