/**
 * Named text memories per agent: store or update, retrieve, delete, list and search (history and restore are
 * in memory-history.ts, the write rules in memory-rules.ts). Each paid call goes through the ledger's
 * `runCharged`, so the memory change, its debit and its idempotency record are one transaction; on a store
 * that runs charged operations as one statement each (PostgreSQL), through memory-statements.ts instead, to
 * the same effect. The price and the ledger name come from the operation's table entry (`ChargeContext`).
 */
import type { Clock } from './clock.js';
import type { ChargeContext, Ledger } from './ledger.js';
import type { Limits } from './limits.js';
import { batchAnswer, retrieveAnswer } from './memory-answers.js';
import { createMemoryHistory } from './memory-history.js';
import { checkCondition, embedAfter, expiryOf, memoryNotFound, storedAnswer } from './memory-rules.js';
import { searchAnswer, toMemoryQuery } from './memory-search.js';
import { createMemoryStatements } from './memory-statements.js';
import { createMemoryWrites, live } from './memory-writes.js';
import type { Memory } from './model.js';
import type { Input, Output } from './schemas.js';
import type { SemanticIndex } from './semantic-index.js';
import { catchUp, rankedSearchPage } from './semantic-search.js';
import type { MemoryPage, StorePort, StoreReader, StoreTx } from './store-port.js';

export function createMemories(
  store: StorePort,
  ledger: Ledger,
  clock: Clock,
  limits: Limits,
  semantic?: SemanticIndex,
) {
  const { writeMemory } = createMemoryWrites(limits);
  const statements = store.charges && createMemoryStatements(store.charges, ledger, limits);

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

  async function storeMemory(
    agentId: string,
    input: Input<'StoreInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'StoreOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    if (statements && ledger.inOneStatement(record)) {
      const done = await statements.storeItems(agentId, [input], charge, record);
      if (done) {
        const [result] = done.results as [{ memory: Memory; created: boolean }];
        semantic?.written(agentId, [result.memory]);
        return storedAnswer(result.memory, result.created, charge.cents, done.balanceCents);
      }
    }
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
        (result, account) => storedAnswer(result.memory, result.created, charge.cents, account.balanceCents),
        record,
      )
      .then(embedAfter(semantic, agentId, () => written));
  }

  /**
   * Up to BATCH_MAX stores in one transaction and one charge (the price per memory times their number): all
   * are stored, or none (the first that fails, a condition, the quota or the balance, fails the batch, free).
   */
  async function storeBatch(
    agentId: string,
    input: Input<'StoreBatchInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'StoreBatchOutput'>> {
    const charge = { cents: price.cents * input.memories.length, operation: price.operation };
    if (statements && ledger.inOneStatement(record)) {
      const done = await statements.storeItems(agentId, input.memories, charge, record);
      if (done) {
        semantic?.written(
          agentId,
          done.results.map((result) => result.memory),
        );
        return batchAnswer(done.results, charge.cents, done.balanceCents);
      }
    }
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
        (results, account) => batchAnswer(results, charge.cents, account.balanceCents),
        record,
      )
      .then(embedAfter(semantic, agentId, () => written));
  }

  async function retrieveMemory(
    agentId: string,
    input: Input<'RetrieveInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'RetrieveOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    if (statements && ledger.inOneStatement(record)) {
      const done = await statements.retrieve(agentId, input, charge, record);
      return retrieveAnswer(done.memory, charge.cents, done.balanceCents);
    }
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
      (memory, account) => retrieveAnswer(memory, charge.cents, account.balanceCents),
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
            Math.max(limits.memoryHistoryVersions, 1),
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
    // With semantic search on, the query's vector, asked for before the transaction (it may be a network
    // call), and the agent's vectors saved by other instances since this one last looked.
    const vector = semantic && query.text !== undefined ? await semantic.embedQuery(query.text) : undefined;
    if (semantic && vector) {
      await semantic.sync(agentId).catch((err: unknown) => semantic.reportError(err));
      if (semantic.needsCatchUp(agentId)) catchUp(store, agentId, semantic, clock.now().toISOString());
    }
    const page = (reader: StoreReader) =>
      query.text === undefined
        ? reader.queryMemories(agentId, query)
        : rankedSearchPage(
            reader,
            agentId,
            { ...query, text: query.text },
            semantic && vector
              ? { index: semantic, vector, minSimilarity: limits.semanticMinSimilarity }
              : undefined,
          );
    const answer = (found: MemoryPage, balanceCents: number) => ({
      success: true as const,
      ...searchAnswer(input, query, found),
      cost_cents: charge.cents,
      credit_balance_cents: balanceCents,
    });
    // One statement: the page read first, then its charge (nothing a search reads can refuse it).
    if (ledger.inOneStatement(record)) {
      return ledger.chargeAnswer(agentId, charge, record, answer(await store.read(page), 0));
    }
    return ledger.runCharged(
      agentId,
      charge,
      page,
      (found, account) => answer(found, account.balanceCents),
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
    listMemoryIndex,
    ...createMemoryHistory(ledger, clock, limits, semantic, statements),
  };
}

export type Memories = ReturnType<typeof createMemories>;
