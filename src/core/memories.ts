/**
 * Named text memories per agent: store or update, retrieve, delete, list by type. Each paid call goes
 * through the ledger's `runCharged`, so the memory change, its debit and its idempotency record are one
 * transaction. The price and the ledger name come from the operation's table entry (`ChargeContext`).
 */
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import type { ChargeContext, Ledger } from './ledger.js';
import type { Limits } from './limits.js';
import type { Memory } from './model.js';
import type { Input, Output } from './schemas.js';
import type { StorePort, StoreTx } from './store-port.js';

export function toMemoryView(memory: Memory): Output<'Memory'> {
  return {
    memory_key: memory.key,
    memory_value: memory.value,
    memory_type: memory.type,
    metadata: memory.metadata,
    created_at: memory.createdAt,
    updated_at: memory.updatedAt,
    version: memory.version,
  };
}

/** What a conditional write expects of the memory under its key (REST If-Match / If-None-Match). */
export interface WriteCondition {
  /** The write goes ahead only if the memory exists with this version. */
  expected_version?: number | undefined;
  /** The write goes ahead only if no memory has this key (a store then only creates). */
  create_only?: boolean | undefined;
}

/**
 * Throws `version_conflict` (412, nothing charged, nothing changed) when the memory under `key` is not as
 * the condition expects; the error says its current version (null when there is none).
 */
export function checkCondition(key: string, existing: Memory | undefined, condition: WriteCondition): void {
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
}

function memoryNotFound(key: string): AppError {
  return new AppError(
    'not_found',
    `No memory with memory_key ${JSON.stringify(key)} exists for this agent; nothing was charged. ` +
      'List your keys with memory_search.',
    { memory_key: key },
  );
}

export function createMemories(store: StorePort, ledger: Ledger, clock: Clock, limits: Limits) {
  function storeMemory(
    agentId: string,
    input: Input<'StoreInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'StoreOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    const work = async (tx: StoreTx) => {
      const existing = await tx.getMemory(agentId, input.memory_key);
      checkCondition(input.memory_key, existing, input);
      if (!existing && (await tx.countMemories(agentId)) >= limits.memoriesPerAgent) {
        throw new AppError(
          'quota_exceeded',
          `This agent already holds ${limits.memoriesPerAgent} memories, the most allowed; nothing was charged. ` +
            'Delete memories you no longer need, or update an existing key.',
          { memories_limit: limits.memoriesPerAgent },
        );
      }
      const now = clock.now().toISOString();
      const memory: Memory = {
        agentId,
        key: input.memory_key,
        value: input.memory_value,
        type: input.memory_type,
        metadata: input.metadata ?? {},
        createdAt: existing?.createdAt ?? now,
        updatedAt: now,
        version: (existing?.version ?? 0) + 1,
      };
      await tx.putMemory(memory);
      return { memory, created: !existing };
    };
    return ledger.runCharged(
      agentId,
      charge,
      work,
      (result, account) => ({
        success: true,
        memory: toMemoryView(result.memory),
        created: result.created,
        cost_cents: charge.cents,
        credit_balance_cents: account.balanceCents,
      }),
      record,
    );
  }

  function retrieveMemory(
    agentId: string,
    input: Input<'RetrieveInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'RetrieveOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    return ledger.runCharged(
      agentId,
      charge,
      async (tx) => {
        const memory = await tx.getMemory(agentId, input.memory_key);
        if (!memory) throw memoryNotFound(input.memory_key);
        return memory;
      },
      (memory, account) => ({
        success: true,
        memory: toMemoryView(memory),
        cost_cents: charge.cents,
        credit_balance_cents: account.balanceCents,
      }),
      record,
    );
  }

  function deleteMemory(
    agentId: string,
    input: Input<'DeleteInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'DeleteOutput'>> {
    const charge = { cents: price.cents, operation: price.operation };
    return ledger.runCharged(
      agentId,
      charge,
      async (tx) => {
        if (input.expected_version !== undefined) {
          checkCondition(input.memory_key, await tx.getMemory(agentId, input.memory_key), input);
        }
        if (!(await tx.deleteMemory(agentId, input.memory_key))) throw memoryNotFound(input.memory_key);
      },
      (_none, account) => ({
        success: true,
        deleted: true,
        memory_key: input.memory_key,
        cost_cents: charge.cents,
        credit_balance_cents: account.balanceCents,
      }),
      record,
    );
  }

  function searchMemories(
    agentId: string,
    input: Input<'SearchInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'SearchOutput'>> {
    const charge = { cents: price.cents, operation: price.operation };
    return ledger.runCharged(
      agentId,
      charge,
      (tx) =>
        tx.listMemories(agentId, {
          ...(input.memory_type ? { type: input.memory_type } : {}),
          limit: input.limit,
        }),
      (found, account) => {
        const memories = found.map(toMemoryView);
        return {
          success: true,
          memories,
          count: memories.length,
          cost_cents: charge.cents,
          credit_balance_cents: account.balanceCents,
        };
      },
      record,
    );
  }

  /** A free index of the agent's memories, newest first, without their values (MCP resource listing). */
  async function listMemoryIndex(agentId: string, limit: number) {
    const memories = await store.read((reader) => reader.listMemories(agentId, { limit }));
    return memories.map((m) => ({ memory_key: m.key, memory_type: m.type, updated_at: m.updatedAt }));
  }

  return { storeMemory, retrieveMemory, deleteMemory, searchMemories, listMemoryIndex };
}

export type Memories = ReturnType<typeof createMemories>;
