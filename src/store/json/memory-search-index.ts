/**
 * The ranked-search index of one agent's memories in the JSON store: an inverted index over the terms of
 * search-text.ts (Porter2 stems, English stop words dropped) of the key, the value and the metadata's values,
 * scored with BM25+ per field (k 1.2, b 0.7, d 0.5 and field weights 2.5, 1, 0.5: MiniSearch's scoring, which
 * this replaced, its per-query result objects costing more than the scoring itself), and each key in ASCII
 * lower case for the key tiers. The state keeps it in step with the agent's memories change by change.
 *
 * Laid out for a query to touch little memory (benchmarks in BENCHMARKS.md, issue 15):
 * - Memories are numbered (slots, reused). Each term's postings, per field, are typed arrays of slot, the
 *   slot's generation when indexed, and the term's frequency there. Replacing or removing a memory bumps its
 *   slot's generation: its old entries become stale where they are, skipped by a query, and a list is
 *   compacted once stale entries outnumber live ones, so the work stays proportional to what is live
 *   (search-postings.ts).
 * - The keys are kept, lowercased, in chunks of slots joined by "\n": the key tiers are found by the engine's
 *   string search over those few strings rather than a test per memory (key-chunks.ts).
 * - A query adds scores into reused arrays, and keeps only the best `first` of the matches in a heap
 *   (top-heap.ts).
 * - Changes are merged in batches (as PostgreSQL's GIN index gathers a pending list): before any query, or
 *   once PENDING_LIMIT have gathered. A query always sees every change made before it.
 */
import { isLive, type Memory } from '../../core/model.js';
import { asciiLower, metadataText, ownString, queryTerms, termOf, words } from '../../core/search-text.js';
import { KeyChunks } from './key-chunks.js';
import { Postings, STRIDE } from './search-postings.js';
import { TopHeap } from './top-heap.js';

const FIELDS = 3;
const BOOST = [2.5, 1, 0.5] as const;
const K = 1.2;
const B = 0.7;
const D = 0.5;
/** `Date.prototype.toISOString`'s form, whose text order is its time order. */
const CANONICAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Changes gathered before they are merged into the index without waiting for a query. */
const PENDING_LIMIT = 256;

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

/** A memory as indexed: the postings lists holding it (one per distinct term and field: to mark stale). */
interface Doc {
  memory: Memory;
  lists: Postings[];
}

/** Term frequencies of one field's text, and how many terms it has. */
function countTerms(text: string): { counts: Map<string, number>; length: number } {
  const counts = new Map<string, number>();
  let length = 0;
  for (const word of words(text)) {
    const term = termOf(word);
    if (term === null) continue;
    counts.set(term, (counts.get(term) ?? 0) + 1);
    length++;
  }
  return { counts, length };
}

function popcount(bits: number): number {
  let n = 0;
  for (let b = bits; b !== 0; b &= b - 1) n++;
  return n;
}

export class MemorySearchIndex {
  /** By slot; undefined where none is (a removed memory's slot is reused). */
  private readonly docs: (Doc | undefined)[] = [];
  private readonly free: number[] = [];
  private readonly slotOf = new Map<string, number>();
  /** Per slot: its generation, bumped when its memory is replaced or removed (its entries then are stale). */
  private generation = new Int32Array(64);
  /** 1 where the memory has an expiry (the rest are live at any time, known without reading them). */
  private expires = new Uint8Array(64);
  /**
   * When the memory was updated, in ms, for ties: only where its text is `toISOString`'s (as every write makes
   * it), whose order is the ms order; NaN otherwise, and the texts are compared.
   */
  private updated = new Float64Array(64);
  /** Per slot: its key in ASCII lower case, for the key tiers. */
  private readonly keys = new KeyChunks();
  /** Per field, per slot: its number of terms (for BM25+). */
  private lengths: Int32Array[] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];
  /** term → its postings per field. */
  private readonly postings = new Map<string, (Postings | undefined)[]>();
  private readonly totalLength = [0, 0, 0];
  /** Per query, reused: scores, the query's terms held (a bit each), key tiers, the slots touched and keyed. */
  private scores = new Float64Array(0);
  private held = new Uint16Array(0);
  private tiers = new Uint8Array(0);
  private touched = new Int32Array(0);
  private keyed = new Int32Array(0);

  /**
   * Changes not yet in the index, by key: the memory now under it, or null once removed. They are merged
   * before any query reads the index, or once PENDING_LIMIT have gathered: many changes merged together find
   * the same postings lists in the processor's cache, and a key changed twice in between is merged once.
   */
  private readonly pending = new Map<string, Memory | null>();

  constructor(memories: Iterable<Memory>) {
    for (const memory of memories) this.putNow(memory);
  }

  get size(): number {
    this.merge();
    return this.slotOf.size;
  }

  /** Indexes `memory` in place of what its key held (merged before the next query). */
  put(memory: Memory): void {
    this.defer(memory.key, memory);
  }

  /** Removes the memory under `key` (merged before the next query). */
  remove(key: string): void {
    this.defer(key, null);
  }

  /** The memory under a key changed without a change of content (its expiry): keeps the new object. */
  refresh(memory: Memory): void {
    const waiting = this.pending.get(memory.key);
    if (waiting === undefined) this.refreshNow(memory);
    else if (waiting !== null) this.pending.set(memory.key, memory); // a removal waiting stays one
  }

  private defer(key: string, memory: Memory | null): void {
    this.pending.set(key, memory);
    if (this.pending.size >= PENDING_LIMIT) this.merge();
  }

  /** Brings the index up to date with every change deferred. */
  private merge(): void {
    if (this.pending.size === 0) return;
    for (const [key, memory] of this.pending) {
      if (memory) this.putNow(memory);
      else this.removeNow(key);
    }
    this.pending.clear();
  }

  /** Indexes `memory` in place of what its key held (in the same slot: the joined keys stay as they are). */
  private putNow(memory: Memory): void {
    const existing = this.slotOf.get(memory.key);
    if (existing !== undefined) {
      this.unindex(existing);
      this.index(existing, memory);
      return;
    }
    const slot = this.free.pop() ?? this.docs.length;
    this.ensureSlot(slot);
    this.index(slot, memory);
    this.slotOf.set(memory.key, slot);
    this.keys.set(slot, asciiLower(memory.key));
  }

  private refreshNow(memory: Memory): void {
    const slot = this.slotOf.get(memory.key);
    if (slot === undefined) return;
    const doc = this.docs[slot] as Doc;
    doc.memory = memory;
    this.noteTimes(slot, memory);
  }

  private noteTimes(slot: number, memory: Memory): void {
    this.expires[slot] = memory.expiresAt === undefined ? 0 : 1;
    this.updated[slot] = CANONICAL_TIME.test(memory.updatedAt) ? Date.parse(memory.updatedAt) : Number.NaN;
  }

  /** Removes the memory under `key`: its entries turn stale and its slot is free. */
  private removeNow(key: string): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return;
    this.unindex(slot);
    this.docs[slot] = undefined;
    this.keys.set(slot, undefined);
    this.slotOf.delete(key);
    this.free.push(slot);
  }

  private ensureSlot(slot: number): void {
    if (slot < this.generation.length) return;
    const size = Math.max(slot + 1, this.generation.length * 2);
    const generation = new Int32Array(size);
    generation.set(this.generation);
    this.generation = generation;
    const expires = new Uint8Array(size);
    expires.set(this.expires);
    this.expires = expires;
    const updated = new Float64Array(size);
    updated.set(this.updated);
    this.updated = updated;
    this.lengths = this.lengths.map((old) => {
      const grown = new Int32Array(size);
      grown.set(old);
      return grown;
    });
  }

  private index(slot: number, memory: Memory): void {
    const gen = this.generation[slot] as number;
    const texts = [memory.key, memory.value, metadataText(memory.metadata)];
    const lists: Postings[] = [];
    for (let field = 0; field < FIELDS; field++) {
      const { counts, length } = countTerms(texts[field] as string);
      for (const [term, tf] of counts) {
        let perField = this.postings.get(term);
        if (!perField) {
          perField = [undefined, undefined, undefined];
          this.postings.set(ownString(term), perField);
        }
        let list = perField[field];
        if (!list) {
          list = new Postings(ownString(term), field);
          perField[field] = list;
        }
        list.push(slot, gen, tf);
        lists.push(list);
      }
      (this.lengths[field] as Int32Array)[slot] = length;
      this.totalLength[field] = (this.totalLength[field] as number) + length;
    }
    this.docs[slot] = { memory, lists };
    this.noteTimes(slot, memory);
  }

  /** Marks the entries of the memory in `slot` stale, compacting a list they leave mostly stale. */
  private unindex(slot: number): void {
    const doc = this.docs[slot] as Doc;
    this.generation[slot] = ((this.generation[slot] as number) + 1) | 0;
    for (const list of doc.lists) {
      list.stale++;
      if (list.live === 0) {
        const perField = this.postings.get(list.term) as (Postings | undefined)[];
        perField[list.field] = undefined;
        if (perField.every((other) => other === undefined)) this.postings.delete(list.term);
      } else if (list.due) {
        list.compact(this.generation);
      }
    }
    for (let field = 0; field < FIELDS; field++) {
      const lengths = this.lengths[field] as Int32Array;
      this.totalLength[field] = (this.totalLength[field] as number) - (lengths[slot] as number);
      lengths[slot] = 0;
    }
  }

  private ensureScratch(): void {
    const capacity = this.docs.length;
    if (this.scores.length >= capacity) return;
    const size = Math.max(64, capacity * 2);
    this.scores = new Float64Array(size);
    this.held = new Uint16Array(size);
    this.tiers = new Uint8Array(size);
    this.touched = new Int32Array(size);
    this.keyed = new Int32Array(size);
  }

  /**
   * The memories whose key, value or metadata holds a term of `text`, or whose key holds `text`, that are live
   * at `liveAt` and pass `filter`: how many, and the first `first` of them by rank. A memory's score: per term
   * and field, BM25+ times the field's weight, summed, then times the number of the query's terms it holds.
   */
  rank(
    text: string,
    conditions: { liveAt?: string; filter?: ((memory: Memory) => boolean) | undefined },
    first: number,
  ): { top: RankedHit[]; total: number } {
    this.merge();
    this.ensureScratch();
    const { scores, held, tiers, touched, keyed, generation } = this;
    const count = this.slotOf.size;
    let touchedCount = 0;
    queryTerms(text).forEach((term, t) => {
      const perField = this.postings.get(term);
      if (!perField || count === 0) return;
      const bit = t < 16 ? 1 << t : 0;
      for (let field = 0; field < FIELDS; field++) {
        const list = perField[field];
        if (!list || list.live === 0) continue;
        const live = list.live;
        const idf = Math.log(1 + (count - live + 0.5) / (live + 0.5));
        const weight = (BOOST[field] as number) * idf;
        const norm = (K * B * count) / ((this.totalLength[field] as number) || 1);
        const base = K * (1 - B);
        const lengths = this.lengths[field] as Int32Array;
        const { entries } = list;
        const end = list.length * STRIDE;
        for (let i = 0; i < end; i += STRIDE) {
          const slot = entries[i] as number;
          if (entries[i + 1] !== generation[slot]) continue;
          const tf = entries[i + 2] as number;
          if (held[slot] === 0) touched[touchedCount++] = slot;
          scores[slot] =
            (scores[slot] as number) +
            weight * (D + (tf * (K + 1)) / (tf + base + norm * (lengths[slot] as number)));
          // Count each query term once per memory, whichever fields hold it: the t-th term sets bit t
          // (a term past the 16th only marks the memory as touched).
          if (bit !== 0) held[slot] = (held[slot] as number) | bit;
          else if (held[slot] === 0) held[slot] = 1;
        }
      }
    });
    const wanted = asciiLower(text.trim());
    let keyedCount = 0;
    if (wanted !== '') {
      this.keys.find(wanted, (slot, whole) => {
        if (tiers[slot] === 0) keyed[keyedCount++] = slot;
        tiers[slot] = whole ? 2 : 1;
      });
    }

    const heap = new TopHeap(first, (x, y) => this.better(x, y));
    const { docs, expires } = this;
    const { liveAt, filter } = conditions;
    let total = 0;
    // Once the heap is full, its worst: most matches rank below it, told without reading their memories.
    let worst = -1;
    for (let i = 0; i < touchedCount + keyedCount; i++) {
      let slot: number;
      let score: number;
      if (i < touchedCount) {
        slot = touched[i] as number;
        score = (scores[slot] as number) * popcount(held[slot] as number);
      } else {
        slot = keyed[i - touchedCount] as number;
        if (held[slot] !== 0) continue; // scored above
        score = 0;
      }
      if (expires[slot] === 1 && !isLive((docs[slot] as Doc).memory, liveAt)) continue;
      if (filter !== undefined && !filter((docs[slot] as Doc).memory)) continue;
      total++;
      scores[slot] = score;
      if (worst >= 0 && this.worse(slot, worst)) continue;
      heap.offer(slot);
      worst = heap.worst() ?? -1;
    }
    const top = heap.sorted().map((slot) => ({
      memory: (this.docs[slot] as Doc).memory,
      tier: tiers[slot] as number,
      score: scores[slot] as number,
    }));
    for (let i = 0; i < touchedCount; i++) {
      const slot = touched[i] as number;
      scores[slot] = 0;
      held[slot] = 0;
    }
    for (let i = 0; i < keyedCount; i++) {
      const slot = keyed[i] as number;
      scores[slot] = 0;
      tiers[slot] = 0;
    }
    return { top, total };
  }

  /**
   * Whether the match in slot `a` ranks before the one in slot `b` (byRank, on this query's scratch): by tier,
   * score and update time from the typed arrays, reading the memories only for a tie of one millisecond.
   */
  private better(a: number, b: number): boolean {
    const { tiers, scores, updated } = this;
    if (tiers[a] !== tiers[b]) return (tiers[a] as number) > (tiers[b] as number);
    if (scores[a] !== scores[b]) return (scores[a] as number) > (scores[b] as number);
    const ua = updated[a] as number;
    const ub = updated[b] as number;
    if (ua !== ub && !Number.isNaN(ua) && !Number.isNaN(ub)) return ua > ub;
    const ma = (this.docs[a] as Doc).memory;
    const mb = (this.docs[b] as Doc).memory;
    if (ma.updatedAt !== mb.updatedAt) return ma.updatedAt > mb.updatedAt;
    return ma.key < mb.key;
  }

  /** Whether the match in slot `a` surely ranks after the one in `b`: told without reading a memory. */
  private worse(a: number, b: number): boolean {
    const { tiers, scores, updated } = this;
    if (tiers[a] !== tiers[b]) return (tiers[a] as number) < (tiers[b] as number);
    if (scores[a] !== scores[b]) return (scores[a] as number) < (scores[b] as number);
    return (updated[a] as number) < (updated[b] as number); // false for NaN: then the heap decides
  }
}
