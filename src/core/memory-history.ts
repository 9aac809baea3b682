/**
 * A memory's history (memory_history) and the restore of a version (memory_restore), charged through the
 * charge port like the other memory operations: the last AC_MEMORY_HISTORY versions of a key and its deletes,
 * kept for AC_MEMORY_HISTORY_RETENTION after the key's last change once it has no live memory.
 */
import type { ChargeContext } from './ledger.js';
import { historyAnswer, restoreAnswer } from './memory-answers.js';
import type { MemoryCharges } from './memory-charges.js';
import type { Input, Output } from './schemas.js';
import type { SemanticIndex } from './semantic-index.js';

export function createMemoryHistory(charged: MemoryCharges, semantic?: SemanticIndex) {
  async function memoryHistory(
    agentId: string,
    input: Input<'HistoryInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'HistoryOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    const done = await charged.history(agentId, input, charge, record);
    return historyAnswer(
      input.memory_key,
      done.currentVersion,
      done.versions,
      charge.cents,
      done.balanceCents,
    );
  }

  async function restoreMemory(
    agentId: string,
    input: Input<'RestoreInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'RestoreOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    const done = await charged.restore(agentId, input, charge, record);
    semantic?.written(agentId, [done.memory]);
    return restoreAnswer(done.memory, done.created, input.version, charge.cents, done.balanceCents);
  }

  return { memoryHistory, restoreMemory };
}
