/**
 * The charged memory operations as the core asks the charge port (charge-port.ts) for them, whatever store
 * runs them: the core prepares what needs no store (the price, the ledger entry, each memory's expiry), the
 * store applies the write rules (memory-writes.ts) with the charge, and each refusal becomes the core's error.
 */
import type { Charged, ChargePort, ChargeRefusal, ImportPlanner, StoreItem } from './charge-port.js';
import { AppError } from './errors.js';
import type { Charge, Ledger, Recorder } from './ledger.js';
import type { Limits } from './limits.js';
import { deleteNotRestorable, quotaExceeded, versionNotInHistory } from './memory-answers.js';
import { checkCondition, expiryOf, memoryNotFound, type WriteCondition } from './memory-rules.js';
import { writeRules } from './memory-writes.js';
import type { Memory } from './model.js';
import type { Input } from './schemas.js';

type StoreInput = Input<'StoreInput'>;

export function createMemoryCharges(charges: ChargePort, ledger: Ledger, limits: Limits) {
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

  /** The item of a memory_store input: its expiry set at `at`, or the error refusing it. */
  function storeItem(input: StoreInput, at: Date): StoreItem {
    const item: StoreItem = {
      key: input.memory_key,
      value: input.memory_value,
      type: input.memory_type,
      metadata: input.metadata ?? {},
      ...(input.expected_version === undefined ? {} : { expectedVersion: input.expected_version }),
      ...(input.create_only ? { createOnly: true } : {}),
    };
    try {
      return { ...item, ...expiryOf(input, at, limits.memoryTtlSeconds) };
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_input') return { ...item, refusedExpiry: err };
      throw err;
    }
  }

  /** memory_store / memory_store_batch: each memory as written and whether it created its key. */
  async function storeItems(
    agentId: string,
    inputs: readonly StoreInput[],
    charge: Charge,
    record: Recorder | undefined,
  ) {
    const request = ledger.chargeRequest(agentId, charge, record);
    const at = new Date(request.at);
    const items = inputs.map((input) => storeItem(input, at));
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
    const written = writeRefusal(() => input);
    return settled(outcome, charge.cents, (refusal) => {
      if (refusal.refused === 'version_not_found')
        return versionNotInHistory(input.memory_key, input.version, rules.keep, rules.retentionSeconds);
      if (refusal.refused === 'version_deleted') return deleteNotRestorable(input.memory_key, input.version);
      return written(refusal);
    });
  }

  /**
   * memory_import, planned by `plan` (which throws the import's own errors) where the store writes it; `quota`
   * is the error of the quota when the memories held changed between the plan and its write.
   */
  async function importLines(
    agentId: string,
    plan: ImportPlanner,
    charge: Charge,
    record: Recorder | undefined,
    quota: (created: number, held: number) => AppError,
  ) {
    // The price is the plan's: a refusal to pay names the cents of the plan the store last made.
    let cents = 0;
    const planned: ImportPlanner = async (reader, at) => {
      const made = await plan(reader, at);
      cents = made.cents;
      return made;
    };
    const outcome = await charges.importMemories(
      ledger.chargeRequest(agentId, charge, record),
      planned,
      rules,
    );
    if (outcome.refused === 'import_quota_exceeded') throw quota(outcome.created, outcome.held);
    return settled(outcome, cents);
  }

  return { storeItems, retrieve, history, restore, importLines };
}

export type MemoryCharges = ReturnType<typeof createMemoryCharges>;
