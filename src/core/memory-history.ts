/**
 * A memory's history (memory_history) and the restore of a version (memory_restore), charged through the
 * ledger like the other memory operations: the last AC_MEMORY_HISTORY versions of a key and its deletes,
 * kept for AC_MEMORY_HISTORY_RETENTION after the key's last change once it has no live memory.
 */
import type { Clock } from './clock.js';
import { describeDuration } from './duration.js';
import { AppError } from './errors.js';
import type { ChargeContext, Ledger } from './ledger.js';
import type { Limits } from './limits.js';
import { checkCondition, embedAfter, memoryNotFound, storedAnswer } from './memory-rules.js';
import { toVersionView } from './memory-views.js';
import { createMemoryWrites, live } from './memory-writes.js';
import type { Memory } from './model.js';
import type { Input, Output } from './schemas.js';
import type { SemanticIndex } from './semantic-index.js';
import type { StoreTx } from './store-port.js';

export function createMemoryHistory(ledger: Ledger, clock: Clock, limits: Limits, semantic?: SemanticIndex) {
  const keep = limits.memoryHistoryVersions;
  const { historyOf, writeMemory } = createMemoryWrites(limits);

  function memoryHistory(
    agentId: string,
    input: Input<'HistoryInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'HistoryOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    return ledger.runCharged(
      agentId,
      charge,
      async (tx) => {
        const at = clock.now();
        const existing = live(await tx.getMemory(agentId, input.memory_key), at.toISOString());
        const versions = await historyOf(tx, agentId, input.memory_key, existing, at, input.limit);
        if (!existing && versions.length === 0) throw memoryNotFound(input.memory_key);
        return { existing, versions };
      },
      ({ existing, versions }, account) => ({
        success: true,
        memory_key: input.memory_key,
        current_version: existing?.version ?? null,
        versions: versions.map(toVersionView),
        cost_cents: charge.cents,
        credit_balance_cents: account.balanceCents,
      }),
      record,
    );
  }

  function restoreMemory(
    agentId: string,
    input: Input<'RestoreInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'RestoreOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    const work = async (tx: StoreTx) => {
      const at = clock.now();
      const existing = live(await tx.getMemory(agentId, input.memory_key), at.toISOString());
      checkCondition(input.memory_key, existing, input);
      const versions = await historyOf(tx, agentId, input.memory_key, existing, at, keep);
      const entry = versions.find((v) => v.version === input.version);
      if (!entry) {
        throw new AppError(
          'not_found',
          `Version ${input.version} of memory_key ${JSON.stringify(input.memory_key)} is not in its history ` +
            `(the last ${keep} versions are kept; a deleted key's for ` +
            `${describeDuration(limits.memoryHistoryRetentionSeconds)} after its last change); nothing was charged. ` +
            'List them with memory_history.',
          { memory_key: input.memory_key, version: input.version },
        );
      }
      if (entry.deleted || entry.value === undefined || entry.type === undefined) {
        throw new AppError(
          'invalid_input',
          `Version ${input.version} of ${JSON.stringify(input.memory_key)} is its delete, which has no content; ` +
            'restore a version before it. Nothing was charged.',
          { field: 'version' },
        );
      }
      const content = {
        value: entry.value,
        type: entry.type,
        metadata: entry.metadata ?? {},
        ...(entry.ttlSeconds === undefined
          ? {}
          : {
              ttlSeconds: entry.ttlSeconds,
              expiresAt: new Date(at.getTime() + entry.ttlSeconds * 1000).toISOString(),
            }),
      };
      const memory = await writeMemory(tx, agentId, input.memory_key, content, existing, at);
      written = [memory];
      return { memory, created: !existing };
    };
    let written: Memory[] = [];
    return ledger
      .runCharged(
        agentId,
        charge,
        work,
        (result, account) => ({
          ...storedAnswer(result.memory, result.created, charge.cents, account.balanceCents),
          restored_from: input.version,
        }),
        record,
      )
      .then(embedAfter(semantic, agentId, () => written));
  }

  return { memoryHistory, restoreMemory };
}
