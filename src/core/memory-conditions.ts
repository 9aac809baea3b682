/** Whether a memory meets a query's conditions (all but its text): the one rule of every store and face. */
import { isLive, type Memory } from './model.js';
import type { MemoryQuery, MetadataScalar } from './store-port.js';

export function meetsConditions(memory: Memory, query: MemoryQuery): boolean {
  if (!isLive(memory, query.liveAt)) return false;
  if (query.types && !query.types.includes(memory.type)) return false;
  if (query.keyPrefix !== undefined && !memory.key.startsWith(query.keyPrefix)) return false;
  if (query.updatedAfter !== undefined && !(memory.updatedAt > query.updatedAfter)) return false;
  if (query.updatedBefore !== undefined && !(memory.updatedAt < query.updatedBefore)) return false;
  for (const [field, wanted] of Object.entries(query.metadata ?? {})) {
    if (!Object.hasOwn(memory.metadata, field)) return false;
    if ((memory.metadata[field] as MetadataScalar) !== wanted) return false;
  }
  return true;
}
