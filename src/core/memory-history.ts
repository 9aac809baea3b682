/**
 * A memory's history (memory_history) and the restore of a version (memory_restore), charged through the
 * ledger like the other memory operations: the last AC_MEMORY_HISTORY versions of a key and its deletes,
 * kept for AC_MEMORY_HISTORY_RETENTION after the key's last change once it has no live memory.
 */
import type { Clock } from './clock.js';
import type { ChargeContext, Ledger } from './ledger.js';
import type { Limits } from './limits.js';
import { deleteNotRestorable, historyAnswer, restoreAnswer, versionNotInHistory } from './memory-answers.js';
import { checkCondition, embedAfter, memoryNotFound } from './memory-rules.js';
import type { MemoryStatements } from './memory-statements.js';
import { createMemoryWrites, live } from './memory-writes.js';
import type { Memory } from './model.js';
import type { Input, Output } from './schemas.js';
import type { SemanticIndex } from './semantic-index.js';
import type { StoreTx } from './store-port.js';

export function createMemoryHistory(
  ledger: Ledger,
  clock: Clock,
  limits: Limits,
  semantic?: SemanticIndex,
  statements?: MemoryStatements,
) {
  const keep = limits.memoryHistoryVersions;
  const { historyOf, writeMemory } = createMemoryWrites(limits);

  async function memoryHistory(
    agentId: string,
    input: Input<'HistoryInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'HistoryOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    if (statements && ledger.inOneStatement(record)) {
      const done = await statements.history(agentId, input, charge, record);
      return historyAnswer(
        input.memory_key,
        done.currentVersion,
        done.versions,
        charge.cents,
        done.balanceCents,
      );
    }
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
      ({ existing, versions }, account) =>
        historyAnswer(
          input.memory_key,
          existing?.version ?? null,
          versions,
          charge.cents,
          account.balanceCents,
        ),
      record,
    );
  }

  async function restoreMemory(
    agentId: string,
    input: Input<'RestoreInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'RestoreOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    if (statements && ledger.inOneStatement(record)) {
      const done = await statements.restore(agentId, input, charge, record);
      if (done) {
        semantic?.written(agentId, [done.memory]);
        return restoreAnswer(done.memory, done.created, input.version, charge.cents, done.balanceCents);
      }
    }
    const work = async (tx: StoreTx) => {
      const at = clock.now();
      const existing = live(await tx.getMemory(agentId, input.memory_key), at.toISOString());
      checkCondition(input.memory_key, existing, input);
      const versions = await historyOf(tx, agentId, input.memory_key, existing, at, keep);
      const entry = versions.find((v) => v.version === input.version);
      if (!entry) {
        throw versionNotInHistory(
          input.memory_key,
          input.version,
          keep,
          limits.memoryHistoryRetentionSeconds,
        );
      }
      if (entry.deleted || entry.value === undefined || entry.type === undefined) {
        throw deleteNotRestorable(input.memory_key, input.version);
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
        (result, account) =>
          restoreAnswer(result.memory, result.created, input.version, charge.cents, account.balanceCents),
        record,
      )
      .then(embedAfter(semantic, agentId, () => written));
  }

  return { memoryHistory, restoreMemory };
}
