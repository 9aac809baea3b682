/**
 * The rules of a memory write that do not depend on the store: when a memory stored now expires, whether a
 * conditional write (If-Match / If-None-Match, expected_version / create_only) may go ahead, the answer of a
 * store, the error of an absent key, and the hand-off of written memories to semantic search.
 */
import { AppError } from './errors.js';
import type { Limits } from './limits.js';
import { toMemoryView } from './memory-views.js';
import { MAX_TTL_SECONDS, type Memory, type MemoryType } from './model.js';
import type { SemanticIndex } from './semantic-index.js';

/**
 * When a memory stored now expires: at `expires_at`, after `ttl_seconds` (0: never), else after its type's
 * default time to live (AC_MEMORY_TTL), else never.
 */
export function expiryOf(
  input: { ttl_seconds?: number | undefined; expires_at?: string | undefined; memory_type: MemoryType },
  now: Date,
  defaults: Limits['memoryTtlSeconds'],
): Pick<Memory, 'expiresAt' | 'ttlSeconds'> {
  if (input.expires_at !== undefined) {
    const at = Date.parse(input.expires_at);
    const ttl = Math.ceil((at - now.getTime()) / 1000);
    if (ttl < 1 || ttl > MAX_TTL_SECONDS) {
      throw new AppError(
        'invalid_input',
        `expires_at must be in the future and at most ten years ahead (it is ${input.expires_at}, and now is ` +
          `${now.toISOString()}); nothing was charged.`,
        { field: 'expires_at' },
      );
    }
    return { expiresAt: new Date(at).toISOString(), ttlSeconds: ttl };
  }
  const ttl = input.ttl_seconds ?? defaults?.[input.memory_type];
  if (!ttl) return {};
  return { expiresAt: new Date(now.getTime() + ttl * 1000).toISOString(), ttlSeconds: ttl };
}

/** What a conditional write expects of the memory under its key (REST If-Match / If-None-Match). */
export interface WriteCondition {
  /** The write goes ahead only if the memory exists with this version. */
  expected_version?: number | undefined;
  /** The write goes ahead only if no memory has this key (a store then only creates). */
  create_only?: boolean | undefined;
}

/** Whether the memory under a key (absent: undefined) is as a conditional write expects. */
export function meetsCondition(existing: Memory | undefined, condition: WriteCondition): boolean {
  if (condition.create_only && existing) return false;
  return (
    condition.expected_version === undefined || (existing?.version ?? null) === condition.expected_version
  );
}

/**
 * Throws `version_conflict` (412, nothing charged, nothing changed) when the memory under `key` is not as
 * the condition expects; the error says its current version (null when there is none).
 */
export function checkCondition(key: string, existing: Memory | undefined, condition: WriteCondition): void {
  if (meetsCondition(existing, condition)) return;
  const current = existing?.version ?? null;
  if (condition.create_only && existing) {
    throw new AppError(
      'version_conflict',
      `A memory with memory_key ${JSON.stringify(key)} already exists (version ${current}) and create_only ` +
        '(If-None-Match: *) asked to create it only; nothing was charged. Retrieve it, or store with ' +
        'expected_version to update it.',
      { memory_key: key, current_version: current },
    );
  }
  if (condition.expected_version !== undefined && current !== condition.expected_version) {
    throw new AppError(
      'version_conflict',
      current === null
        ? `No memory with memory_key ${JSON.stringify(key)} exists, and expected_version ` +
            `${condition.expected_version} (If-Match) asked for that version; nothing was charged or changed.`
        : `The memory ${JSON.stringify(key)} is at version ${current}, not expected_version ` +
            `${condition.expected_version} (If-Match): it changed since you read it; nothing was charged or ` +
            'changed. Retrieve it again, merge, and retry with its current version.',
      { memory_key: key, current_version: current, expected_version: condition.expected_version },
    );
  }
  throw new Error('unreachable: a failed condition is one of the two above');
}

export function memoryNotFound(key: string): AppError {
  return new AppError(
    'not_found',
    `No memory with memory_key ${JSON.stringify(key)} exists for this agent; nothing was charged. ` +
      'List your keys with memory_search.',
    { memory_key: key },
  );
}

/** The answer of a write that stored `memory` (store, batch item, restore). */
export function storedAnswer(memory: Memory, created: boolean, cents: number, balanceCents: number) {
  return {
    success: true as const,
    memory: toMemoryView(memory),
    created,
    cost_cents: cents,
    credit_balance_cents: balanceCents,
  };
}

/** After a write commits: its memories go to semantic search's background embedding, if it is on. */
export function embedAfter<T>(
  semantic: SemanticIndex | undefined,
  agentId: string,
  memories: () => Memory[],
) {
  return (response: T): T => {
    semantic?.written(agentId, memories());
    return response;
  };
}
