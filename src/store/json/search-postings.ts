/**
 * One term's postings in one field, for the JSON store's search index (memory-search-index.ts): the slot of
 * each memory holding the term, the slot's generation when it was indexed, and the term's frequency there. An
 * entry whose generation is no longer its slot's is stale: skipped by a query, dropped at compaction.
 */

/** Numbers per postings entry: slot, generation, frequency. */
export const STRIDE = 3;
/** A list is compacted when its stale entries are at least this many and outnumber its live ones. */
const COMPACT_AT = 16;

/**
 * One term's occurrences in one field: per entry, the slot, the slot's generation when indexed, and the
 * frequency, side by side in one array (an entry added or read touches one place in memory, not three).
 */
export class Postings {
  constructor(
    readonly term: string,
    readonly field: number,
  ) {}

  /** [slot, generation, frequency] per entry. */
  entries = new Int32Array(4 * STRIDE);
  length = 0;
  stale = 0;

  get live(): number {
    return this.length - this.stale;
  }

  /** Whether stale entries are worth dropping now: enough of them, and more than the live ones. */
  get due(): boolean {
    return this.stale >= COMPACT_AT && this.stale > this.live;
  }

  push(slot: number, gen: number, tf: number): void {
    const at = this.length * STRIDE;
    if (at === this.entries.length) {
      const grown = new Int32Array(this.entries.length * 2);
      grown.set(this.entries);
      this.entries = grown;
    }
    const { entries } = this;
    entries[at] = slot;
    entries[at + 1] = gen;
    entries[at + 2] = tf;
    this.length++;
  }

  /** Drops the entries whose slot has moved on to another generation. */
  compact(generation: Int32Array): void {
    const { entries } = this;
    let kept = 0;
    for (let i = 0; i < this.length * STRIDE; i += STRIDE) {
      if (entries[i + 1] !== generation[entries[i] as number]) continue;
      entries[kept] = entries[i] as number;
      entries[kept + 1] = entries[i + 1] as number;
      entries[kept + 2] = entries[i + 2] as number;
      kept += STRIDE;
    }
    this.length = kept / STRIDE;
    this.stale = 0;
  }
}
