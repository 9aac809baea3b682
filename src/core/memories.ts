/**
 * Named text memories per agent: store or update, retrieve, delete, list by type. Each paid call goes
 * through the ledger's `runCharged`, so the memory change, its debit and its idempotency record are one
 * transaction. The price and the ledger name come from the operation's table entry (`ChargeContext`).
 */
import type { Clock } from './clock.js';
import { describeDuration } from './duration.js';
import { AppError } from './errors.js';
import type { ChargeContext, Ledger } from './ledger.js';
import type { Limits } from './limits.js';
import { searchAnswer, toMemoryQuery } from './memory-search.js';
import { toMemoryView, toVersionView } from './memory-views.js';
import { createMemoryWrites, live } from './memory-writes.js';
import { MAX_TTL_SECONDS, type Memory, type MemoryType } from './model.js';
import type { Input, Output } from './schemas.js';
import type { SemanticIndex } from './semantic-index.js';
import { catchUp, semanticPage } from './semantic-search.js';
import type { StorePort, StoreTx } from './store-port.js';

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

export function createMemories(
  store: StorePort,
  ledger: Ledger,
  clock: Clock,
  limits: Limits,
  semantic?: SemanticIndex,
) {
  const keep = limits.memoryHistoryVersions;

  const { historyOf, writeMemory } = createMemoryWrites(limits);

  function stored(memory: Memory, created: boolean, cents: number, balanceCents: number) {
    return {
      success: true as const,
      memory: toMemoryView(memory),
      created,
      cost_cents: cents,
      credit_balance_cents: balanceCents,
    };
  }

  /** One memory_store input, inside the charging transaction. */
  async function storeOne(tx: StoreTx, agentId: string, input: Input<'StoreInput'>, at: Date) {
    // An expired memory is absent: a store over it creates the key anew.
    const existing = live(await tx.getMemory(agentId, input.memory_key), at.toISOString());
    checkCondition(input.memory_key, existing, input);
    const content = {
      value: input.memory_value,
      type: input.memory_type,
      metadata: input.metadata ?? {},
      ...expiryOf(input, at, limits.memoryTtlSeconds),
    };
    const memory = await writeMemory(tx, agentId, input.memory_key, content, existing, at);
    return { memory, created: !existing };
  }

  function storeMemory(
    agentId: string,
    input: Input<'StoreInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'StoreOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    let written: Memory[] = [];
    return ledger
      .runCharged(
        agentId,
        charge,
        async (tx) => {
          const result = await storeOne(tx, agentId, input, clock.now());
          written = [result.memory];
          return result;
        },
        (result, account) => stored(result.memory, result.created, charge.cents, account.balanceCents),
        record,
      )
      .then(embedAfter(agentId, () => written));
  }

  /** After a write commits: its memories go to semantic search's background embedding, if it is on. */
  function embedAfter<T>(agentId: string, memories: () => Memory[]) {
    return (response: T): T => {
      semantic?.written(agentId, memories());
      return response;
    };
  }

  /**
   * Up to BATCH_MAX stores in one transaction and one charge (the price per memory times their number): all
   * are stored, or none (the first that fails, a condition, the quota or the balance, fails the batch, free).
   */
  function storeBatch(
    agentId: string,
    input: Input<'StoreBatchInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'StoreBatchOutput'>> {
    const charge = { cents: price.cents * input.memories.length, operation: price.operation };
    let written: Memory[] = [];
    return ledger
      .runCharged(
        agentId,
        charge,
        async (tx) => {
          const at = clock.now();
          const results = [];
          for (const item of input.memories) results.push(await storeOne(tx, agentId, item, at));
          written = results.map((result) => result.memory);
          return results;
        },
        (results, account) => ({
          success: true as const,
          results: results.map((r) => ({ memory: toMemoryView(r.memory), created: r.created })),
          count: results.length,
          cost_cents: charge.cents,
          credit_balance_cents: account.balanceCents,
        }),
        record,
      )
      .then(embedAfter(agentId, () => written));
  }

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
          ...stored(result.memory, result.created, charge.cents, account.balanceCents),
          restored_from: input.version,
        }),
        record,
      )
      .then(embedAfter(agentId, () => written));
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
        const at = clock.now();
        const memory = live(await tx.getMemory(agentId, input.memory_key), at.toISOString());
        if (!memory) throw memoryNotFound(input.memory_key);
        if (!input.refresh_on_read || memory.ttlSeconds === undefined) return memory;
        const expiresAt = new Date(at.getTime() + memory.ttlSeconds * 1000).toISOString();
        // False when the background purge removed it since it was read: it had expired, so it is absent.
        if (!(await tx.setMemoryExpiry(agentId, input.memory_key, expiresAt))) {
          throw memoryNotFound(input.memory_key);
        }
        return { ...memory, expiresAt };
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
    return ledger
      .runCharged(
        agentId,
        charge,
        async (tx) => {
          const at = clock.now().toISOString();
          const existing = live(await tx.getMemory(agentId, input.memory_key), at);
          if (input.expected_version !== undefined) checkCondition(input.memory_key, existing, input);
          if (!existing) throw memoryNotFound(input.memory_key);
          await tx.deleteMemory(agentId, input.memory_key);
          // The delete takes the next version as a marker: restoring an earlier version undoes it. Kept also
          // while no history is (AC_MEMORY_HISTORY=0), alone, so that the key's numbers go on after it.
          await tx.putMemoryVersion(
            { agentId, key: input.memory_key, version: existing.version + 1, at, deleted: true },
            Math.max(keep, 1),
          );
        },
        (_none, account) => ({
          success: true as const,
          deleted: true as const,
          memory_key: input.memory_key,
          cost_cents: charge.cents,
          credit_balance_cents: account.balanceCents,
        }),
        record,
      )
      .then((response) => {
        semantic?.deleted(agentId, input.memory_key);
        return response;
      });
  }

  async function searchMemories(
    agentId: string,
    input: Input<'SearchInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'SearchOutput'>> {
    const charge = { cents: price.cents, operation: price.operation };
    // Read (and so checked: a bad cursor is a free 400) before anything is charged.
    const query = toMemoryQuery(input, clock.now().toISOString());
    // With semantic search on, the query's vector, asked for before the transaction (it is a network call).
    const vector = semantic && query.text !== undefined ? await semantic.embedQuery(query.text) : undefined;
    if (semantic && vector && semantic.needsCatchUp(agentId)) {
      catchUp(store, agentId, semantic, clock.now().toISOString());
    }
    return ledger.runCharged(
      agentId,
      charge,
      (tx) =>
        semantic && vector && query.text !== undefined
          ? semanticPage(
              tx,
              agentId,
              { ...query, text: query.text },
              semantic,
              vector,
              limits.semanticMinSimilarity,
            )
          : tx.queryMemories(agentId, query),
      (page, account) => ({
        success: true,
        ...searchAnswer(input, query, page),
        cost_cents: charge.cents,
        credit_balance_cents: account.balanceCents,
      }),
      record,
    );
  }

  /** A free index of the agent's memories, newest first, without their values (MCP resource listing). */
  async function listMemoryIndex(agentId: string, limit: number) {
    const liveAt = clock.now().toISOString();
    const memories = await store.read((reader) => reader.listMemories(agentId, { limit, liveAt }));
    return memories.map((m) => ({ memory_key: m.key, memory_type: m.type, updated_at: m.updatedAt }));
  }

  return {
    storeMemory,
    storeBatch,
    retrieveMemory,
    deleteMemory,
    searchMemories,
    memoryHistory,
    restoreMemory,
    listMemoryIndex,
  };
}

export type Memories = ReturnType<typeof createMemories>;
