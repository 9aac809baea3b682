/**
 * The answers of the charged memory operations, and the errors of what refuses them, in one place: the core
 * (memories.ts, memory-history.ts), the stores' charge ports when they keep an answer for an idempotency key
 * (store/transaction-charges.ts; PostgreSQL's templates, store/postgres/postgres-answers.ts) all build them
 * here.
 */
import { describeDuration } from './duration.js';
import { AppError } from './errors.js';
import { storedAnswer } from './memory-rules.js';
import { toMemoryView, toVersionView } from './memory-views.js';
import type { Memory, MemoryVersion } from './model.js';

export { storedAnswer };

export function retrieveAnswer(memory: Memory, cents: number, balanceCents: number) {
  return {
    success: true as const,
    memory: toMemoryView(memory),
    cost_cents: cents,
    credit_balance_cents: balanceCents,
  };
}

export function batchAnswer(
  results: readonly { memory: Memory; created: boolean }[],
  cents: number,
  balanceCents: number,
) {
  return {
    success: true as const,
    results: results.map((r) => ({ memory: toMemoryView(r.memory), created: r.created })),
    count: results.length,
    cost_cents: cents,
    credit_balance_cents: balanceCents,
  };
}

export function historyAnswer(
  key: string,
  currentVersion: number | null,
  versions: readonly MemoryVersion[],
  cents: number,
  balanceCents: number,
) {
  return {
    success: true as const,
    memory_key: key,
    current_version: currentVersion,
    versions: versions.map(toVersionView),
    cost_cents: cents,
    credit_balance_cents: balanceCents,
  };
}

export function restoreAnswer(
  memory: Memory,
  created: boolean,
  restoredFrom: number,
  cents: number,
  balanceCents: number,
) {
  return { ...storedAnswer(memory, created, cents, balanceCents), restored_from: restoredFrom };
}

/** A write that would take the agent past the most memories it may hold. */
export function quotaExceeded(limit: number): AppError {
  return new AppError(
    'quota_exceeded',
    `This agent already holds ${limit} memories, the most allowed; nothing was charged. ` +
      'Delete memories you no longer need, or update an existing key.',
    { memories_limit: limit },
  );
}

/** A restore of a version its key's history does not hold (any more). */
export function versionNotInHistory(
  key: string,
  version: number,
  keep: number,
  retentionSeconds: number,
): AppError {
  return new AppError(
    'not_found',
    `Version ${version} of memory_key ${JSON.stringify(key)} is not in its history ` +
      `(the last ${keep} versions are kept; a deleted key's for ` +
      `${describeDuration(retentionSeconds)} after its last change); nothing was charged. ` +
      'List them with memory_history.',
    { memory_key: key, version },
  );
}

/** A restore of a key's delete marker. */
export function deleteNotRestorable(key: string, version: number): AppError {
  return new AppError(
    'invalid_input',
    `Version ${version} of ${JSON.stringify(key)} is its delete, which has no content; ` +
      'restore a version before it. Nothing was charged.',
    { field: 'version' },
  );
}
