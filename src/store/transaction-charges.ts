/**
 * The charge port (core/charge-port.ts) run as transactions of the store port (`transact`), with the core's
 * own rule functions: the JSON store's implementation, and PostgreSQL's where a statement does not fit (a
 * large import, a restore whose version keeps changing). Each operation loads the paying account, refuses what
 * it cannot pay (ledger.ts `spendRefusal`), applies the operation's rules (memory-writes.ts, memory-rules.ts),
 * appends the ledger entry (`chargeEntry`) and keeps the answer (memory-answers.ts) for the request's
 * idempotency claim, in one transaction; a refusal (`refuse`) rolls it back and is answered as such.
 */
import type {
  Charged,
  ChargePort,
  ChargeRequest,
  ImportPlanner,
  MemoryContent,
  StoreItem,
  WriteRules,
} from '../core/charge-port.js';
import { ChargeRefused, refuse } from '../core/charge-refused.js';
import { chargeEntry, dailyLimitIn, spendRefusal } from '../core/ledger.js';
import {
  batchAnswer,
  historyAnswer,
  restoreAnswer,
  retrieveAnswer,
  storedAnswer,
} from '../core/memory-answers.js';
import { meetsCondition } from '../core/memory-rules.js';
import { createMemoryWrites, live } from '../core/memory-writes.js';
import type { Account, JsonObject, Memory } from '../core/model.js';
import type { StorePort, StoreTx } from '../core/store-port.js';

/** The memory an item writes, without what the port adds around it (its key, condition, plan). */
function contentOf(item: MemoryContent) {
  const { value, type, metadata, expiresAt, ttlSeconds } = item;
  return {
    value,
    type,
    metadata,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
  };
}

/** What an operation did in its transaction, its price (when known only from it), and its kept answer. */
interface Done<T> {
  result: T;
  /** The price, when the work sets it (an import's plan); else the request's. */
  cents?: number;
  answer(balanceCents: number): JsonObject;
}

export function createTransactionCharges(store: Pick<StorePort, 'transact'>): ChargePort {
  /** Refuses when `account` cannot pay `cents` now. */
  async function checkPay(tx: StoreTx, account: Account, request: ChargeRequest, cents: number) {
    if (cents === 0) return;
    const limit = dailyLimitIn(account, request.daily);
    const spent = limit === undefined ? undefined : await tx.spentSince(account.id, request.daily.since);
    const refusal = spendRefusal(account, cents, 0, spent, limit);
    if (refusal) refuse(refusal);
  }

  /**
   * Runs `work` charged as `request` says, in one transaction: the account checked (before the work, or after
   * it when the work sets the price), the work, the ledger entry, the idempotency record.
   */
  async function charged<T extends object>(
    request: ChargeRequest,
    work: (tx: StoreTx) => Promise<Done<T>>,
    priceAfterWork = false,
  ): Promise<Charged<T>> {
    try {
      return await store.transact(async (tx) => {
        const account = await tx.getAccount(request.agentId);
        if (!account) return refuse({ refused: 'unauthorized' });
        if (!priceAfterWork) await checkPay(tx, account, request, request.cents);
        const done = await work(tx);
        const due = done.cents === undefined ? request : { ...request, cents: done.cents };
        if (priceAfterWork) await checkPay(tx, account, due, due.cents);
        const next = chargeEntry(account, due);
        if (next) {
          await tx.appendLedger(next.entry);
          await tx.putAccount(next.account);
        }
        const balanceCents = (next?.account ?? account).balanceCents;
        const { claim } = request;
        if (claim) {
          await tx.putIdempotency(
            {
              agentId: request.agentId,
              key: claim.key,
              fingerprint: claim.fingerprint,
              operation: request.operation,
              status: 200,
              body: done.answer(balanceCents),
              createdAt: request.at,
            },
            claim.token,
          );
        }
        return { ...done.result, balanceCents };
      });
    } catch (err) {
      if (err instanceof ChargeRefused) return err.refusal;
      throw err;
    }
  }

  /** The live memory under `key` at the request's instant. */
  async function liveMemory(tx: StoreTx, request: ChargeRequest, key: string) {
    return live(await tx.getMemory(request.agentId, key), request.at);
  }

  return {
    retrieveMemory(request, key, refresh) {
      return charged(request, async (tx) => {
        let memory = await liveMemory(tx, request, key);
        if (!memory) return refuse({ refused: 'not_found' });
        if (refresh && memory.ttlSeconds !== undefined) {
          const expiresAt = new Date(Date.parse(request.at) + memory.ttlSeconds * 1000).toISOString();
          // False when the background purge removed it since it was read: it had expired, so it is absent.
          if (!(await tx.setMemoryExpiry(request.agentId, key, expiresAt))) refuse({ refused: 'not_found' });
          memory = { ...memory, expiresAt };
        }
        const found = memory;
        return {
          result: { memory: found },
          answer: (balance) => retrieveAnswer(found, request.cents, balance),
        };
      });
    },

    storeMemories(request, items: readonly StoreItem[], rules: WriteRules) {
      const { writeMemory } = createMemoryWrites(rules);
      return charged(request, async (tx) => {
        const at = new Date(request.at);
        const results: { memory: Memory; created: boolean }[] = [];
        for (const item of items) {
          const existing = await liveMemory(tx, request, item.key);
          const condition = { expected_version: item.expectedVersion, create_only: item.createOnly };
          if (!meetsCondition(existing, condition)) {
            refuse({ refused: 'version_conflict', key: item.key, currentVersion: existing?.version ?? null });
          }
          if (item.refusedExpiry) throw item.refusedExpiry;
          const memory = await writeMemory(tx, request.agentId, item.key, contentOf(item), existing, at);
          results.push({ memory, created: !existing });
        }
        const batch = request.operation === 'memory_store_batch';
        return {
          result: { results },
          answer: (balance) => {
            if (batch) return batchAnswer(results, request.cents, balance);
            const [one] = results as [{ memory: Memory; created: boolean }];
            return storedAnswer(one.memory, one.created, request.cents, balance);
          },
        };
      });
    },

    memoryHistory(request, key, limit, rules) {
      const { historyOf } = createMemoryWrites(rules);
      return charged(request, async (tx) => {
        const existing = await liveMemory(tx, request, key);
        const versions = await historyOf(tx, request.agentId, key, existing, new Date(request.at), limit);
        if (!existing && versions.length === 0) refuse({ refused: 'not_found' });
        const currentVersion = existing?.version ?? null;
        return {
          result: { currentVersion, versions },
          answer: (balance) => historyAnswer(key, currentVersion, versions, request.cents, balance),
        };
      });
    },

    restoreMemory(request, restore, rules) {
      const { historyOf, writeMemory } = createMemoryWrites(rules);
      return charged(request, async (tx) => {
        const at = new Date(request.at);
        const existing = await liveMemory(tx, request, restore.key);
        if (!meetsCondition(existing, { expected_version: restore.expectedVersion })) {
          refuse({
            refused: 'version_conflict',
            key: restore.key,
            currentVersion: existing?.version ?? null,
          });
        }
        const versions = await historyOf(tx, request.agentId, restore.key, existing, at, rules.keep);
        const entry = versions.find((v) => v.version === restore.version);
        if (!entry) return refuse({ refused: 'version_not_found' });
        if (entry.deleted || entry.value === undefined || entry.type === undefined) {
          return refuse({ refused: 'version_deleted' });
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
        const memory = await writeMemory(tx, request.agentId, restore.key, content, existing, at);
        const created = !existing;
        return {
          result: { memory, created },
          answer: (balance) => restoreAnswer(memory, created, restore.version, request.cents, balance),
        };
      });
    },

    importMemories(request, plan: ImportPlanner, rules) {
      const { writeMemory } = createMemoryWrites(rules);
      return charged(
        request,
        async (tx) => {
          const at = new Date(request.at);
          const planned = await plan(tx, at);
          const written: Memory[] = [];
          for (const item of planned.items) {
            const existing = await liveMemory(tx, request, item.key);
            written.push(
              await writeMemory(tx, request.agentId, item.key, contentOf(item), existing, at, item.kept),
            );
          }
          const answer = (balance: number) => ({ ...planned.answer, credit_balance_cents: balance });
          return {
            result: { written, answer: planned.answer },
            cents: planned.cents,
            answer,
          };
        },
        true,
      );
    },

    charge(request, answer) {
      return charged(request, async () => ({
        result: {},
        answer: (balance) => ({ ...answer, credit_balance_cents: balance }),
      }));
    },
  };
}
