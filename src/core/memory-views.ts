/** Memories and their history entries as the operations answer them. */
import type { Memory, MemoryVersion } from './model.js';
import type { Output } from './schemas.js';

export function toMemoryView(memory: Memory): Output<'Memory'> {
  return {
    memory_key: memory.key,
    memory_value: memory.value,
    memory_type: memory.type,
    metadata: memory.metadata,
    created_at: memory.createdAt,
    updated_at: memory.updatedAt,
    version: memory.version,
    expires_at: memory.expiresAt ?? null,
  };
}

/** An entry of a memory's history, as memory_history answers it. */
export function toVersionView(entry: MemoryVersion): Output<'MemoryVersion'> {
  if (entry.deleted) return { version: entry.version, stored_at: entry.at, deleted: true };
  return {
    version: entry.version,
    stored_at: entry.at,
    deleted: false,
    memory_value: entry.value ?? '',
    memory_type: entry.type ?? 'context',
    metadata: entry.metadata ?? {},
  };
}
