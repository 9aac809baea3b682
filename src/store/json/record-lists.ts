/**
 * Pure helpers over the JSON store's in-memory records, shared by the committed state and a transaction's
 * overlay: a key's history trimmed and read newest first, memories counted live, listed newest first, and
 * paged in key order.
 */
import { isLive, type Memory, type MemoryVersion } from '../../core/model.js';
import type { MemoryFilter } from '../../core/store-reader.js';

/** `versions` (oldest first) with `entry` added last, the oldest dropped so that at most `keep` remain. */
export function withVersion(
  versions: readonly MemoryVersion[],
  entry: MemoryVersion,
  keep: number,
): MemoryVersion[] {
  const next = [...versions, entry];
  return next.length > keep ? next.slice(next.length - keep) : next;
}

/** The newest `limit` of `versions` (given oldest first), newest first. */
export function newestVersions(versions: readonly MemoryVersion[], limit: number): MemoryVersion[] {
  return versions.slice(Math.max(0, versions.length - limit)).reverse();
}

/** The live memories after the key `page.after`, in key order, at most `page.limit`. */
export function byKey(
  memories: Iterable<Memory>,
  page: { after?: string; limit: number; liveAt: string },
): Memory[] {
  const out: Memory[] = [];
  for (const memory of memories) {
    if ((page.after === undefined || memory.key > page.after) && isLive(memory, page.liveAt))
      out.push(memory);
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : 1)).slice(0, page.limit);
}

/** How many of `memories` are live at `liveAt`. */
export function countLive(memories: Iterable<Memory>, liveAt: string | undefined): number {
  let count = 0;
  for (const memory of memories) if (isLive(memory, liveAt)) count++;
  return count;
}

/** Walks memories given oldest first and returns the newest `limit` of them live and matching `type`. */
export function newestFirst(oldestFirst: Iterable<Memory>, filter: MemoryFilter): Memory[] {
  const all = [...oldestFirst];
  const out: Memory[] = [];
  for (let i = all.length - 1; i >= 0 && out.length < filter.limit; i--) {
    const memory = all[i] as Memory;
    if ((filter.type === undefined || memory.type === filter.type) && isLive(memory, filter.liveAt)) {
      out.push(memory);
    }
  }
  return out;
}
