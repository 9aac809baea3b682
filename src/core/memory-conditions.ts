/** Whether a memory meets a query's conditions (all but its text): the one rule of every store and face. */
import { isLive, type Memory } from './model.js';
import type { MemoryQuery, MetadataScalar } from './store-reader.js';

export function meetsConditions(memory: Memory, query: MemoryQuery): boolean {
  return conditionsOf(query)(memory);
}

/** `meetsConditions` for one query, read once (a ranked search tests hundreds of matches per query). */
export function conditionsOf(query: MemoryQuery): (memory: Memory) => boolean {
  const { liveAt } = query;
  const filter = filterOf(query);
  return filter ? (memory) => isLive(memory, liveAt) && filter(memory) : (memory) => isLive(memory, liveAt);
}

/**
 * The query's conditions other than being live at `liveAt`, as one test that does only what the query asks;
 * undefined when it asks nothing more (most ranked searches).
 */
export function filterOf(query: MemoryQuery): ((memory: Memory) => boolean) | undefined {
  const { types, keyPrefix, updatedAfter, updatedBefore } = query;
  const metadata = Object.entries(query.metadata ?? {});
  if (
    !types &&
    keyPrefix === undefined &&
    updatedAfter === undefined &&
    updatedBefore === undefined &&
    metadata.length === 0
  ) {
    return undefined;
  }
  return (memory) => {
    if (types && !types.includes(memory.type)) return false;
    if (keyPrefix !== undefined && !memory.key.startsWith(keyPrefix)) return false;
    if (updatedAfter !== undefined && !(memory.updatedAt > updatedAfter)) return false;
    if (updatedBefore !== undefined && !(memory.updatedAt < updatedBefore)) return false;
    for (const [field, wanted] of metadata) {
      if (!Object.hasOwn(memory.metadata, field)) return false;
      if ((memory.metadata[field] as MetadataScalar) !== wanted) return false;
    }
    return true;
  };
}
