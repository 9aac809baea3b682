/**
 * Named text memories per agent: store or update, retrieve, delete, list and search (history and restore are
 * in memory-history.ts). Each charged call goes through the store's charge port (memory-charges.ts), so the
 * memory change, its debit and its idempotency record happen at once; a delete, free, is a transaction of the
 * ledger's `runCharged`. The price and the ledger name come from the operation's table entry
 * (`ChargeContext`).
 */
import type { Clock } from './clock.js';
import type { ChargeContext, Ledger } from './ledger.js';
import type { Limits } from './limits.js';
import { batchAnswer, retrieveAnswer } from './memory-answers.js';
import { createMemoryCharges } from './memory-charges.js';
import { createMemoryHistory } from './memory-history.js';
import { checkCondition, memoryNotFound, storedAnswer } from './memory-rules.js';
import { searchAnswer, toMemoryQuery } from './memory-search.js';
import { live } from './memory-writes.js';
import type { Input, Output } from './schemas.js';
import type { SemanticIndex } from './semantic-index.js';
import { catchUp, rankedSearchPage } from './semantic-search.js';
import type { StorePort } from './store-port.js';
import type { MemoryPage, StoreReader } from './store-reader.js';

export function createMemories(
  store: StorePort,
  ledger: Ledger,
  clock: Clock,
  limits: Limits,
  semantic?: SemanticIndex,
) {
  const charged = createMemoryCharges(store.charges, ledger, limits);

  async function storeMemory(
    agentId: string,
    input: Input<'StoreInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'StoreOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    const done = await charged.storeItems(agentId, [input], charge, record);
    const [result] = done.results as [(typeof done.results)[number]];
    semantic?.written(agentId, [result.memory]);
    return storedAnswer(result.memory, result.created, charge.cents, done.balanceCents);
  }

  /**
   * Up to BATCH_MAX stores in one charge (the price per memory times their number): all are stored, or none
   * (the first that fails, a condition, the quota or the balance, fails the batch, free).
   */
  async function storeBatch(
    agentId: string,
    input: Input<'StoreBatchInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'StoreBatchOutput'>> {
    const charge = { cents: price.cents * input.memories.length, operation: price.operation };
    const done = await charged.storeItems(agentId, input.memories, charge, record);
    semantic?.written(
      agentId,
      done.results.map((result) => result.memory),
    );
    return batchAnswer(done.results, charge.cents, done.balanceCents);
  }

  async function retrieveMemory(
    agentId: string,
    input: Input<'RetrieveInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'RetrieveOutput'>> {
    const charge = { cents: price.cents, operation: price.operation, ref: { memoryKey: input.memory_key } };
    const done = await charged.retrieve(agentId, input, charge, record);
    return retrieveAnswer(done.memory, charge.cents, done.balanceCents);
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
    // The page read first, then its charge (nothing a search reads can refuse it).
    return ledger.chargeAnswer(agentId, charge, record, answer(await store.read(page), 0));
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
    ...createMemoryHistory(charged, semantic),
  };
}

export type Memories = ReturnType<typeof createMemories>;
