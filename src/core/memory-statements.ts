/**
 * The charged memory operations on a store that runs each as one statement (charge-port.ts; PostgreSQL): the
 * core prepares what needs no store (the price, the ledger entry, each memory's expiry), the store applies the
 * rules the transaction path applies (memories.ts, memory-writes.ts) in one statement, and each refusal becomes
 * the error that path throws. A request the statement cannot take as it is (an expiry the core refuses) takes
 * the transaction path instead, so that its errors come in the same order as there.
 */
import type { Charged, ChargeRefusal, ChargeStatements, StoreItem, WriteRules } from './charge-port.js';
import { AppError } from './errors.js';
import type { Charge, Ledger, Recorder } from './ledger.js';
import type { Limits } from './limits.js';
import { deleteNotRestorable, quotaExceeded, versionNotInHistory } from './memory-answers.js';
import { checkCondition, expiryOf, memoryNotFound, type WriteCondition } from './memory-rules.js';
import type { Memory } from './model.js';
import type { Input } from './schemas.js';

type StoreInput = Input<'StoreInput'>;

/** How memories are written, as the store's statements take it. */
export function writeRules(limits: Limits): WriteRules {
  return {
    quota: limits.memoriesPerAgent,
    keep: limits.memoryHistoryVersions,
    retentionSeconds: limits.memoryHistoryRetentionSeconds,
  };
}

export function createMemoryStatements(charges: ChargeStatements, ledger: Ledger, limits: Limits) {
  const rules = writeRules(limits);

  /** The result of a charge, or the error of its refusal (`own` maps the operation's own refusals). */
  function settled<T extends object>(
    outcome: Charged<T>,
    cents: number,
    own: (refusal: ChargeRefusal) => AppError | undefined = () => undefined,
  ): T & { balanceCents: number } {
    if (outcome.refused === undefined) return outcome;
    throw own(outcome) ?? ledger.refusalError(outcome, cents);
  }

  /** A refusal for want of the memory under `key`: its 404. */
  const notFound =
    (key: string) =>
    (refusal: ChargeRefusal): AppError | undefined =>
      refusal.refused === 'not_found' ? memoryNotFound(key) : undefined;

  /** The refusals of a memory write: a condition, the quota. */
  function writeRefusal(conditions: (key: string) => WriteCondition) {
    return (refusal: ChargeRefusal): AppError | undefined => {
      if (refusal.refused === 'quota_exceeded') return quotaExceeded(rules.quota);
      if (refusal.refused !== 'version_conflict') return undefined;
      const current =
        refusal.currentVersion === null ? undefined : ({ version: refusal.currentVersion } as Memory);
      try {
        checkCondition(refusal.key, current, conditions(refusal.key));
      } catch (err) {
        return err as AppError;
      }
      return undefined;
    };
  }

  /**
   * memory_store / memory_store_batch; undefined when an item's expiry is refused (the transaction path then
   * answers, with the errors in its order).
   */
  async function storeItems(
    agentId: string,
    inputs: readonly StoreInput[],
    charge: Charge,
    record: Recorder | undefined,
  ): Promise<({ results: { memory: Memory; created: boolean }[] } & { balanceCents: number }) | undefined> {
    const request = ledger.chargeRequest(agentId, charge, record);
    const at = new Date(request.at);
    let items: StoreItem[];
    try {
      items = inputs.map((input) => ({
        key: input.memory_key,
        value: input.memory_value,
        type: input.memory_type,
        metadata: input.metadata ?? {},
        ...expiryOf(input, at, limits.memoryTtlSeconds),
        ...(input.expected_version === undefined ? {} : { expectedVersion: input.expected_version }),
        ...(input.create_only ? { createOnly: true } : {}),
      }));
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_input') return undefined;
      throw err;
    }
    const byKey = new Map(inputs.map((input) => [input.memory_key, input]));
    const outcome = await charges.storeMemories(request, items, rules);
    return settled(
      outcome,
      charge.cents,
      writeRefusal((key) => byKey.get(key) ?? {}),
    );
  }

  async function retrieve(
    agentId: string,
    input: Input<'RetrieveInput'>,
    charge: Charge,
    record: Recorder | undefined,
  ) {
    const request = ledger.chargeRequest(agentId, charge, record);
    const outcome = await charges.retrieveMemory(request, input.memory_key, input.refresh_on_read === true);
    return settled(outcome, charge.cents, notFound(input.memory_key));
  }

  async function history(
    agentId: string,
    input: Input<'HistoryInput'>,
    charge: Charge,
    record: Recorder | undefined,
  ) {
    const request = ledger.chargeRequest(agentId, charge, record);
    const outcome = await charges.memoryHistory(request, input.memory_key, input.limit, rules);
    return settled(outcome, charge.cents, notFound(input.memory_key));
  }

  /** memory_restore; undefined when its version kept changing under it (the transaction path then answers). */
  async function restore(
    agentId: string,
    input: Input<'RestoreInput'>,
    charge: Charge,
    record: Recorder | undefined,
  ) {
    const request = ledger.chargeRequest(agentId, charge, record);
    const outcome = await charges.restoreMemory(
      request,
      {
        key: input.memory_key,
        version: input.version,
        ...(input.expected_version === undefined ? {} : { expectedVersion: input.expected_version }),
      },
      rules,
    );
    // Its version kept changing under it: the transaction path takes it (undefined).
    if (outcome.refused === 'stale') return undefined;
    const written = writeRefusal(() => input);
    return settled(outcome, charge.cents, (refusal) => {
      if (refusal.refused === 'version_not_found')
        return versionNotInHistory(input.memory_key, input.version, rules.keep, rules.retentionSeconds);
      if (refusal.refused === 'version_deleted') return deleteNotRestorable(input.memory_key, input.version);
      return written(refusal);
    });
  }

  return { storeItems, retrieve, history, restore };
}

export type MemoryStatements = ReturnType<typeof createMemoryStatements>;
