/**
 * How a memory is written, whatever writes it (store, batch, restore, import): the quota, the next version
 * (never reused while any trace of the key is kept) and the history entry beside the memory.
 */
import type { WriteRules } from './charge-port.js';
import { refuse } from './charge-refused.js';
import type { Limits } from './limits.js';
import { isLive, type Memory, type MemoryVersion } from './model.js';
import type { StoreTx } from './store-port.js';
import type { StoreReader } from './store-reader.js';

/** How memories are written under `limits`, as the charge port takes it. */
export function writeRules(limits: Limits): WriteRules {
  return {
    quota: limits.memoriesPerAgent,
    keep: limits.memoryHistoryVersions,
    retentionSeconds: limits.memoryHistoryRetentionSeconds,
  };
}

/** The memory if it is live at `at` (an ISO instant): an expired one is absent everywhere. */
export function live(memory: Memory | undefined, at: string): Memory | undefined {
  return memory && isLive(memory, at) ? memory : undefined;
}

/** What an import keeps of its line instead of what a store would set. */
export interface Kept {
  createdAt?: string;
  updatedAt?: string;
  version?: number;
}

export function createMemoryWrites(rules: WriteRules) {
  const keep = rules.keep;

  /** Whether a key's history, newest entry `newest`, is past its retention (its key has no live memory). */
  function retired(newest: MemoryVersion, at: Date): boolean {
    return Date.parse(newest.at) < at.getTime() - rules.retentionSeconds * 1000;
  }

  /**
   * The key's history, newest first (at most `limit`), as far as it is kept: the history of a key without a
   * live memory is gone once its retention ran out, even before the background purge drops it.
   */
  async function historyOf(
    tx: StoreReader,
    agentId: string,
    key: string,
    existing: Memory | undefined,
    at: Date,
    limit: number,
  ) {
    if (keep === 0) return [];
    const versions = await tx.listMemoryVersions(agentId, key, limit);
    const [newest] = versions;
    return newest && !existing && retired(newest, at) ? [] : versions;
  }

  /**
   * The version the key's next write takes: one more than its live memory's, else than its history's newest
   * (a deleted or expired memory's numbers go on, also across a new life of the key after its retention and
   * while AC_MEMORY_HISTORY is 0, when a delete leaves its marker alone), else 1. A number is never reused
   * while any trace of the key is kept, so an ETag from before never matches what comes after. The history of
   * a new life, or any history while none is kept, is dropped here.
   */
  async function nextVersion(
    tx: StoreTx,
    agentId: string,
    key: string,
    existing: Memory | undefined,
    at: Date,
  ) {
    // A live memory's version is its history's newest (or newer, after a time without history).
    if (existing && keep > 0) return existing.version + 1;
    const [newest] = await tx.listMemoryVersions(agentId, key, 1);
    if (newest && (keep === 0 || (!existing && retired(newest, at)))) {
      await tx.dropMemoryVersions(agentId, key);
    }
    return Math.max(existing?.version ?? 0, newest?.version ?? 0) + 1;
  }

  /**
   * Writes a memory (a store, a restore or an import) over `existing` (live or absent), with its history
   * entry; an import keeps its line's times and version (`kept`). Refuses (`quota_exceeded`) a memory past
   * the quota.
   */
  async function writeMemory(
    tx: StoreTx,
    agentId: string,
    key: string,
    content: Pick<Memory, 'value' | 'type' | 'metadata' | 'expiresAt' | 'ttlSeconds'>,
    existing: Memory | undefined,
    at: Date,
    kept: Kept = {},
  ): Promise<Memory> {
    const now = at.toISOString();
    if (!existing && (await tx.countMemories(agentId, now)) >= rules.quota)
      refuse({ refused: 'quota_exceeded' });
    const next = await nextVersion(tx, agentId, key, existing, at);
    const memory: Memory = {
      agentId,
      key,
      ...content,
      createdAt: kept.createdAt ?? existing?.createdAt ?? now,
      updatedAt: kept.updatedAt ?? now,
      // A version kept from elsewhere (an import) only for a key with no trace here: numbers never go back.
      version: next === 1 && kept.version !== undefined ? kept.version : next,
    };
    await tx.putMemory(memory);
    if (keep > 0) {
      await tx.putMemoryVersion(
        {
          agentId,
          key,
          version: memory.version,
          at: now,
          value: memory.value,
          type: memory.type,
          metadata: memory.metadata,
          ...(memory.ttlSeconds === undefined ? {} : { ttlSeconds: memory.ttlSeconds }),
        },
        keep,
      );
    }
    return memory;
  }

  return { retired, historyOf, writeMemory };
}
