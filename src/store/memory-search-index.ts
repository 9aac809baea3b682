/**
 * The ranked-search index of one agent's memories in the JSON store: an inverted index over the terms of
 * search-text.ts (Porter2 stems, English stop words dropped) of the key, the value and the metadata's values,
 * scored with BM25+ per field (k 1.2, b 0.7, d 0.5, the parameters of MiniSearch, which it replaces: its
 * per-query result objects cost more than the scoring itself), and each key in ASCII lower case for the key
 * tiers. The state keeps it in step with the agent's memories change by change: a replaced memory's terms
 * are removed as they were indexed, so nothing is left to vacuum.
 */
import type { Memory } from '../core/model.js';
import { asciiLower, metadataText, queryTerms, termOf, words } from '../core/search-text.js';

/** The fields, in index order, and their weights: the key counts most, then the value, then metadata. */
const FIELDS = 3;
const BOOST = [2.5, 1, 0.5] as const;
const K = 1.2;
const B = 0.7;
const D = 0.5;

function termsOf(text: string): string[] {
  const out: string[] = [];
  for (const word of words(text)) {
    const term = termOf(word);
    if (term !== null) out.push(term);
  }
  return out;
}

function fieldsOf(memory: Memory): [string[], string[], string[]] {
  return [termsOf(memory.key), termsOf(memory.value), termsOf(metadataText(memory.metadata))];
}

export class MemorySearchIndex {
  /** term → field → key → how often the term occurs there. */
  private readonly postings = new Map<string, Map<string, number>[]>();
  /** key → the terms of its fields, as indexed (their lengths for BM25, and what to remove on a change). */
  private readonly indexed = new Map<string, string[][]>();
  private readonly totalLength = [0, 0, 0];
  /** Each key in ASCII lower case, for the key tiers. */
  private readonly lowerKeys = new Map<string, string>();

  constructor(memories: Iterable<Memory>) {
    for (const memory of memories) this.add(memory);
  }

  /** Indexes `memory` in place of what its key held. */
  put(memory: Memory): void {
    this.remove(memory);
    this.add(memory);
  }

  /** Removes `memory`'s key and the terms it was indexed with. */
  remove(memory: Memory): void {
    const fields = this.indexed.get(memory.key);
    if (!fields) return;
    fields.forEach((terms, field) => {
      for (const term of terms) {
        const perField = this.postings.get(term);
        if (!perField?.[field]?.delete(memory.key)) continue;
        if (perField.every((docs) => docs.size === 0)) this.postings.delete(term);
      }
      this.totalLength[field] = (this.totalLength[field] as number) - terms.length;
    });
    this.indexed.delete(memory.key);
    this.lowerKeys.delete(memory.key);
  }

  private add(memory: Memory): void {
    if (this.indexed.has(memory.key)) return;
    const fields = fieldsOf(memory);
    fields.forEach((terms, field) => {
      for (const term of terms) {
        let perField = this.postings.get(term);
        if (!perField) {
          perField = [new Map(), new Map(), new Map()];
          this.postings.set(term, perField);
        }
        const docs = perField[field] as Map<string, number>;
        docs.set(memory.key, (docs.get(memory.key) ?? 0) + 1);
      }
      this.totalLength[field] = (this.totalLength[field] as number) + terms.length;
    });
    this.indexed.set(memory.key, fields);
    this.lowerKeys.set(memory.key, asciiLower(memory.key));
  }

  /**
   * The keys whose memories hold a term of `text`, with their scores: per term and field, BM25+ times the
   * field's weight, summed, then times the number of the query's terms the memory holds.
   */
  search(text: string): Map<string, number> {
    const count = this.indexed.size;
    const hits = new Map<string, { score: number; terms: number; last: number }>();
    if (count === 0) return new Map();
    const average = this.totalLength.map((total) => total / count || 1);
    queryTerms(text).forEach((term, t) => {
      const perField = this.postings.get(term);
      if (!perField) return;
      for (let field = 0; field < FIELDS; field++) {
        const docs = perField[field] as Map<string, number>;
        if (docs.size === 0) continue;
        const idf = Math.log(1 + (count - docs.size + 0.5) / (docs.size + 0.5));
        const weight = (BOOST[field] as number) * idf;
        const norm = (K * B) / (average[field] as number);
        const base = K * (1 - B);
        for (const [key, tf] of docs) {
          const length = ((this.indexed.get(key) as string[][])[field] as string[]).length;
          const score = weight * (D + (tf * (K + 1)) / (tf + base + norm * length));
          const hit = hits.get(key);
          if (!hit) hits.set(key, { score, terms: 1, last: t });
          else {
            hit.score += score;
            if (hit.last !== t) {
              hit.terms++;
              hit.last = t;
            }
          }
        }
      }
    });
    const scores = new Map<string, number>();
    for (const [key, hit] of hits) scores.set(key, hit.score * hit.terms);
    return scores;
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
