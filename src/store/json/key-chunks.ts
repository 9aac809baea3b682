/**
 * The keys of the JSON store's search index (memory-search-index.ts), in ASCII lower case, by slot, for the key
 * tiers: which keys hold a query. They are joined by "\n" (a key holds no control character) in chunks of CHUNK
 * slots, each with a filter of the character pairs it holds, so that a query scans with the engine's `indexOf`
 * the few chunks that may hold it rather than testing every key. A chunk is rejoined at the next search after
 * one of its keys came or went.
 */

/** Slots per chunk of the joined keys. */
const CHUNK = 256;
/** Bits of a chunk's filter of adjacent character pairs (a Bloom filter with one hash). */
const PAIR_BITS = 8192;

/** Where the pair of characters `a`, `b` falls in the filter. */
function pairBit(a: number, b: number): number {
  return Math.imul((a << 16) | b, 0x9e3779b1) >>> 19;
}

interface Chunk {
  text: string;
  /** Per key joined: its slot and where it starts in `text`. */
  slots: Int32Array;
  starts: Int32Array;
  pairs: Uint32Array;
}

export class KeyChunks {
  private readonly keys: (string | undefined)[] = [];
  /** Per chunk; undefined: to be rejoined. */
  private readonly chunks: (Chunk | undefined)[] = [];

  /** Sets (or, with undefined, clears) the lowercased key of `slot`. */
  set(slot: number, lowerKey: string | undefined): void {
    this.keys[slot] = lowerKey;
    this.chunks[Math.floor(slot / CHUNK)] = undefined;
  }

  /**
   * Calls `found` with the slot of every key that holds `wanted` (lowercased, not empty), once per key, and
   * whether the key is `wanted` itself.
   */
  find(wanted: string, found: (slot: number, whole: boolean) => void): void {
    if (wanted.includes('\n')) {
      // Never from the API (a query holds no control character); answered by a test per key all the same.
      this.keys.forEach((key, slot) => {
        if (key?.includes(wanted)) found(slot, key === wanted);
      });
      return;
    }
    const wantedPairs: number[] = [];
    for (let i = 0; i + 1 < wanted.length; i++) {
      wantedPairs.push(pairBit(wanted.charCodeAt(i), wanted.charCodeAt(i + 1)));
    }
    const chunks = Math.ceil(this.keys.length / CHUNK);
    for (let c = 0; c < chunks; c++) {
      const { text, slots, starts, pairs } = this.chunk(c);
      // A chunk lacking a pair of the query's adjacent characters holds no key that holds the query.
      if (wantedPairs.some((bit) => ((pairs[bit >>> 5] as number) & (1 << (bit & 31))) === 0)) continue;
      let from = 0;
      for (;;) {
        const at = text.indexOf(wanted, from);
        if (at < 0) break;
        // The key the match is in: the last whose start is at or before it.
        let lo = 0;
        let hi = starts.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >>> 1;
          if ((starts[mid] as number) <= at) lo = mid;
          else hi = mid - 1;
        }
        const slot = slots[lo] as number;
        const key = this.keys[slot] as string;
        found(slot, key.length === wanted.length);
        // On to the next key: one match per key is enough.
        from = (starts[lo] as number) + key.length + 1;
      }
    }
  }

  /** The chunk's keys joined, rejoined first if a key in it came or went. */
  private chunk(c: number): Chunk {
    const ready = this.chunks[c];
    if (ready) return ready;
    const slots: number[] = [];
    const starts: number[] = [];
    const keys: string[] = [];
    let at = 0;
    for (let slot = c * CHUNK; slot < Math.min(this.keys.length, (c + 1) * CHUNK); slot++) {
      const key = this.keys[slot];
      if (key === undefined) continue;
      slots.push(slot);
      starts.push(at);
      keys.push(key);
      at += key.length + 1;
    }
    const text = keys.join('\n');
    const pairs = new Uint32Array(PAIR_BITS / 32);
    for (let i = 0; i + 1 < text.length; i++) {
      const bit = pairBit(text.charCodeAt(i), text.charCodeAt(i + 1));
      pairs[bit >>> 5] = (pairs[bit >>> 5] as number) | (1 << (bit & 31));
    }
    const joined = { text, slots: Int32Array.from(slots), starts: Int32Array.from(starts), pairs };
    this.chunks[c] = joined;
    return joined;
  }
}
