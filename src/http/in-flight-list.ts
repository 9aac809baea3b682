/**
 * The things under way (responses being answered, per-request MCP servers), held in the slots of one array
 * rather than in a Set, because of how V8 resizes a Set. When a Set grows, shrinks or fills up with deleted
 * entries, it moves to a new hash table, allocated in the same generation as the old one; the table it leaves
 * still holds the entries it had (and a pointer to the new one, for iterators) until it is collected. Once the
 * Set's table has been promoted to the old generation, every table it leaves is old garbage that only a full
 * collection frees, and the young-generation collector, which does not trace the old generation, treats
 * everything such a table points at as live: the requests in flight when it was left (request, response,
 * handler closures) outlive the young collections, are copied into the old generation and stay there until a
 * full collection. Whether a process falls into this depends on whether its Set's table was ever promoted.
 * Measured under 50 connections (`--trace-gc-nvp`; BENCHMARKS.md, issue 12): with a Set, 2.2–3.4 MB promoted
 * per young collection and 5.8–8.2 ms pauses, in some processes of the service and in every one of a bare
 * Express app given the same Set; with these slots, 0–0.1 MB and 1.1–2.5 ms. An emptied slot holds nothing,
 * and the array is only ever as long as the most things under way at once.
 */
export class InFlightList<T extends object> {
  private readonly slots: (T | undefined)[] = [];
  /** Indexes of empty slots, reused before the array grows. */
  private readonly free: number[] = [];
  private count = 0;

  /** Holds `item` until `remove` is called with the slot returned. */
  add(item: T): number {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = item;
    this.count++;
    return slot;
  }

  /** Empties `slot` if it still holds `item` (a second call does nothing). */
  remove(slot: number, item: T): void {
    if (this.slots[slot] !== item) return;
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.count--;
  }

  get size(): number {
    return this.count;
  }

  /** The items held now, as a new array (safe to remove from while going through it). */
  items(): T[] {
    return this.slots.filter((item): item is T => item !== undefined);
  }
}
