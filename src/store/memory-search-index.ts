/**
 * The ranked-search index of one agent's memories in the JSON store: an inverted index over the terms of
 * search-text.ts (Porter2 stems, English stop words dropped) of the key, the value and the metadata's values,
 * scored with BM25+ per field (k 1.2, b 0.7, d 0.5 and field weights 2.5, 1, 0.5: MiniSearch's scoring,
 * which this replaces, its per-query result objects costing more than the scoring itself), and each key in
 * ASCII lower case for the key tiers. Memories are numbered inside the index, so that a query adds scores
 * into an array rather than maps. The state keeps it in step with the agent's memories change by change: a
 * replaced memory's terms are removed as they were indexed, so nothing is left to vacuum.
 */
import type { Memory } from '../core/model.js';
import { asciiLower, metadataText, queryTerms, termOf, tierOfLowered, words } from '../core/search-text.js';

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

function fieldsOf(memory: Memory): string[][] {
  return [termsOf(memory.key), termsOf(memory.value), termsOf(metadataText(memory.metadata))];
}

interface Doc {
  memory: Memory;
  /** The terms of its fields as indexed: their lengths for BM25, and what to remove on a change. */
  fields: string[][];
  lowerKey: string;
}

export interface RankedHit {
  memory: Memory;
  /** 2: the key is the query; 1: the key holds it; 0: neither. */
  tier: number;
  score: number;
}

/** Best first: key tier, score, the most recently updated, then by key. */
export function byRank(a: RankedHit, b: RankedHit): number {
  return (
    b.tier - a.tier ||
    b.score - a.score ||
    (a.memory.updatedAt < b.memory.updatedAt ? 1 : a.memory.updatedAt > b.memory.updatedAt ? -1 : 0) ||
    (a.memory.key < b.memory.key ? -1 : 1)
  );
}

export class MemorySearchIndex {
  /** By number; undefined where a memory was removed (its number is reused). */
  private readonly docs: (Doc | undefined)[] = [];
  private readonly free: number[] = [];
  private readonly ids = new Map<string, number>();
  /** term → per field, memory number → how often the term occurs there. */
  private readonly postings = new Map<string, Map<number, number>[]>();
  private readonly totalLength = [0, 0, 0];
  /** Per query, reused: each memory's score and how many of the query's terms it holds. */
  private scores = new Float64Array(0);
  private held = new Uint16Array(0);

  constructor(memories: Iterable<Memory>) {
    for (const memory of memories) this.add(memory);
  }

  get size(): number {
    return this.ids.size;
  }

  /** Indexes `memory` in place of what its key held. */
  put(memory: Memory): void {
    this.remove(memory.key);
    this.add(memory);
  }

  /** The memory under a key changed without a change of content (its expiry): keeps the new object. */
  refresh(memory: Memory): void {
    const id = this.ids.get(memory.key);
    const doc = id === undefined ? undefined : this.docs[id];
    if (doc) doc.memory = memory;
  }

  /** Removes the memory under `key` and the terms it was indexed with. */
  remove(key: string): void {
    const id = this.ids.get(key);
    if (id === undefined) return;
    const doc = this.docs[id] as Doc;
    doc.fields.forEach((terms, field) => {
      for (const term of terms) {
        const perField = this.postings.get(term);
        if (!perField?.[field]?.delete(id)) continue;
        if (perField.every((postings) => postings.size === 0)) this.postings.delete(term);
      }
      this.totalLength[field] = (this.totalLength[field] as number) - terms.length;
    });
    this.docs[id] = undefined;
    this.free.push(id);
    this.ids.delete(key);
  }

  private add(memory: Memory): void {
    const id = this.free.pop() ?? this.docs.length;
    const fields = fieldsOf(memory);
    fields.forEach((terms, field) => {
      for (const term of terms) {
        let perField = this.postings.get(term);
        if (!perField) {
          perField = [new Map(), new Map(), new Map()];
          this.postings.set(term, perField);
        }
        const postings = perField[field] as Map<number, number>;
        postings.set(id, (postings.get(id) ?? 0) + 1);
      }
      this.totalLength[field] = (this.totalLength[field] as number) + terms.length;
    });
    this.docs[id] = { memory, fields, lowerKey: asciiLower(memory.key) };
    this.ids.set(memory.key, id);
  }

  /**
   * The memories whose key, value or metadata holds a term of `text`, or whose key holds `text`, that
   * `accept` takes: how many, and the first `first` of them by rank. A memory's score: per term and field,
   * BM25+ times the field's weight, summed, then times the number of the query's terms it holds.
   */
  rank(
    text: string,
    accept: (memory: Memory) => boolean,
    first: number,
  ): { top: RankedHit[]; total: number } {
    const capacity = this.docs.length;
    if (this.scores.length < capacity) {
      this.scores = new Float64Array(capacity * 2);
      this.held = new Uint16Array(capacity * 2);
    }
    const { scores, held } = this;
    const touched: number[] = [];
    const count = this.ids.size;
    queryTerms(text).forEach((term, t) => {
      const perField = this.postings.get(term);
      if (!perField || count === 0) return;
      for (let field = 0; field < FIELDS; field++) {
        const postings = perField[field] as Map<number, number>;
        if (postings.size === 0) continue;
        const idf = Math.log(1 + (count - postings.size + 0.5) / (postings.size + 0.5));
        const weight = (BOOST[field] as number) * idf;
        const norm = (K * B * count) / ((this.totalLength[field] as number) || 1);
        const base = K * (1 - B);
        for (const [id, tf] of postings) {
          const length = ((this.docs[id] as Doc).fields[field] as string[]).length;
          if (held[id] === 0) touched.push(id);
          scores[id] = (scores[id] as number) + weight * (D + (tf * (K + 1)) / (tf + base + norm * length));
          // Count each query term once per memory, whichever fields hold it: the t-th term sets bit t.
          if (t < 16) held[id] = (held[id] as number) | (1 << t);
          else if (held[id] === 0) held[id] = 1;
        }
      }
    });
    const wanted = asciiLower(text.trim());
    const top: RankedHit[] = [];
    let total = 0;
    const consider = (doc: Doc, tier: number, score: number) => {
      if (!accept(doc.memory)) return;
      total++;
      const hit = { memory: doc.memory, tier, score };
      if (top.length === first && byRank(hit, top[first - 1] as RankedHit) >= 0) return;
      let lo = 0;
      let hi = top.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (byRank(top[mid] as RankedHit, hit) <= 0) lo = mid + 1;
        else hi = mid;
      }
      top.splice(lo, 0, hit);
      if (top.length > first) top.pop();
    };
    const tierOf = (doc: Doc) => tierOfLowered(doc.lowerKey, wanted);
    for (const id of touched) {
      const doc = this.docs[id] as Doc;
      consider(doc, tierOf(doc), (scores[id] as number) * popcount(held[id] as number));
    }
    if (wanted !== '') {
      for (let id = 0; id < capacity; id++) {
        const doc = this.docs[id];
        if (!doc || held[id] !== 0) continue;
        const tier = tierOf(doc);
        if (tier > 0) consider(doc, tier, 0);
      }
    }
    for (const id of touched) {
      scores[id] = 0;
      held[id] = 0;
    }
    return { top, total };
  }
}

function popcount(bits: number): number {
  let n = 0;
  for (let b = bits; b !== 0; b &= b - 1) n++;
  return n;
}
