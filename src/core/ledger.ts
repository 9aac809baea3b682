/**
 * The ledger: every change of a balance is one appended entry, written in the same transaction as the
 * account's new balance, so the balance always equals the sum of the entries and never goes below zero.
 * `runCharged` is the one path every priced operation takes: check the balance (and the daily spending
 * limit, when one is set), do the work, debit, and write the idempotency record, all in one transaction;
 * if anything fails, nothing is written and nothing is charged.
 */
import { randomUUID } from 'node:crypto';
import type { ChargeClaim, ChargeRefusal, ChargeRequest } from './charge-port.js';
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import type { Limits } from './limits.js';
import {
  type Account,
  type ChargedOperationName,
  isUnlimited,
  type JsonObject,
  type LedgerEntry,
  type LedgerOperation,
  type Plan,
} from './model.js';
import type { StorePort, StoreReader, StoreTx } from './store-port.js';

/** What a ledger entry concerns, shown in the account's transactions. */
export type LedgerRef = Pick<LedgerEntry, 'memoryKey' | 'queryType' | 'query'>;

export interface Charge {
  cents: number;
  operation: LedgerOperation;
  ref?: LedgerRef;
}

/**
 * Writes a successful response in the transaction that charged for it (see idempotency.ts); the charge's
 * ledger entry names the request's idempotency key, and the client that spent it when the request carried
 * an OAuth access token (a recorder may carry only that: it then writes nothing).
 */
export interface Recorder {
  (tx: StoreTx, body: JsonObject): Promise<void>;
  readonly idempotencyKey?: string;
  readonly client?: string;
  /** The claim on the key, for a store that finishes it in the charging statement (charge-port.ts). */
  readonly claim?: ChargeClaim;
}

/** `record` (if any) with the spending client added to what its ledger entry says. */
export function recorderFor(record: Recorder | undefined, client: string | undefined): Recorder | undefined {
  if (client === undefined) return record;
  const write = async (tx: StoreTx, body: JsonObject) => {
    if (record) await record(tx, body);
  };
  return Object.assign(write, {
    ...(record?.idempotencyKey === undefined ? {} : { idempotencyKey: record.idempotencyKey }),
    ...(record?.claim === undefined ? {} : { claim: record.claim }),
    client,
  });
}

/** A charged operation's price and ledger name, as its table entry declares them. */
export interface Price {
  operation: ChargedOperationName;
  /** Cents charged on success. */
  cents: number;
  /** Cents charged when the result is served from the cache (live data); absent where there is none. */
  cachedCents?: number;
}

/**
 * What a charged operation's core function receives from its table entry (see `chargedOperation` in
 * operation-kit.ts): the price to charge and the name to charge it under, and the recorder of an
 * idempotency key, which must get the response inside the charging transaction. The core never writes a
 * price or an operation name of its own.
 */
export interface ChargeContext {
  charge: Price;
  record?: Recorder;
}

export function insufficientCredits(required: number, balance: number): AppError {
  return new AppError(
    'insufficient_credits',
    `This operation costs ${required} cents but the balance is ${balance} cents; nothing was charged. ` +
      'Ask the operator to top up the account, or use free operations (delete, cached data).',
    { required_cents: required, credit_balance_cents: balance },
  );
}

/** The agent's account; `unauthorized` when it is gone (its key was valid when the request began). */
export async function loadAccount(reader: StoreReader, agentId: string): Promise<Account> {
  const account = await reader.getAccount(agentId);
  if (!account) throw noAccount();
  return account;
}

function noAccount(): AppError {
  return new AppError('unauthorized', 'This API key no longer belongs to an account; register again.');
}

/** Midnight UTC at the start of `now`'s day, and the next one. */
function utcDay(now: Date): { start: string; next: string } {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { start: new Date(start).toISOString(), next: new Date(start + 86_400_000).toISOString() };
}

export function createLedger(
  store: StorePort,
  clock: Clock,
  limits: Pick<Limits, 'dailySpendCents' | 'unlimitedDailySpendCents'>,
) {
  /** The daily spending limit of the account's plan, if it has one. */
  function dailyLimitOf(account: Account): number | undefined {
    return isUnlimited(account) ? limits.unlimitedDailySpendCents : limits.dailySpendCents;
  }

  /** What the agent has spent today (UTC), when a daily limit applies to it; otherwise `undefined`. */
  async function spentToday(reader: StoreReader, account: Account): Promise<number | undefined> {
    if (dailyLimitOf(account) === undefined) return undefined;
    return reader.spentSince(account.id, utcDay(clock.now()).start);
  }

  /**
   * Throws when `account` cannot pay `cents` now: too low a balance (on the pay-as-you-go plan), or past
   * the daily spending limit of its plan (`spent` is `spentToday`). `held` is what the agent has reserved
   * for work in flight (live-data fetches). Synchronous, so that a caller can check and reserve with
   * nothing in between.
   */
  function checkCanSpend(account: Account, cents: number, held: number, spentSoFar: number | undefined) {
    if (cents === 0) return;
    const available = account.balanceCents - held;
    if (!isUnlimited(account) && available < cents) throw insufficientCredits(cents, Math.max(0, available));
    const limit = dailyLimitOf(account);
    if (limit === undefined || spentSoFar === undefined) return;
    const spent = spentSoFar + held;
    if (spent + cents > limit) throw dailyLimitReached(cents, spent, limit);
  }

  function dailyLimitReached(cents: number, spent: number, limit: number): AppError {
    const day = utcDay(clock.now());
    return new AppError(
      'daily_limit_reached',
      `This operation costs ${cents} cents and this agent has spent ${spent} of the ${limit} cents it may ` +
        `spend per day; nothing was charged. The limit resets at ${day.next}; free operations ` +
        '(delete, cached data, account) still work.',
      { required_cents: cents, daily_limit_cents: limit, spent_today_cents: spent, resets_at: day.next },
    );
  }

  async function assertCanSpend(reader: StoreReader, account: Account, cents: number) {
    checkCanSpend(account, cents, 0, await spentToday(reader, account));
  }

  async function appendEntry(
    tx: StoreTx,
    account: Account,
    amountCents: number,
    operation: LedgerOperation,
    extra: Pick<
      LedgerEntry,
      'memoryKey' | 'queryType' | 'query' | 'idempotencyKey' | 'costCents' | 'plan' | 'client'
    > = {},
  ): Promise<Account> {
    const entry: LedgerEntry = {
      id: `txn_${randomUUID()}`,
      agentId: account.id,
      at: clock.now().toISOString(),
      operation,
      amountCents,
      balanceAfterCents: account.balanceCents + amountCents,
      ...extra,
    };
    const updated = { ...account, balanceCents: entry.balanceAfterCents };
    await tx.appendLedger(entry);
    await tx.putAccount(updated);
    return updated;
  }

  /** Adds credit (starter credit, top-up) inside a transaction. */
  function credit(tx: StoreTx, account: Account, cents: number, operation: LedgerOperation) {
    return appendEntry(tx, account, cents, operation);
  }

  /**
   * Debits inside a transaction; throws (and so writes nothing) when the agent cannot pay. On the unlimited
   * plan the entry records the cost with an amount of 0: the balance is untouched and still equals the sum
   * of the amounts, and the cost stays visible.
   */
  async function debit(tx: StoreTx, account: Account, charge: Charge, record?: Recorder): Promise<Account> {
    if (charge.cents === 0) return account;
    await assertCanSpend(tx, account, charge.cents);
    const cost = {
      ...charge.ref,
      ...(record?.idempotencyKey === undefined ? {} : { idempotencyKey: record.idempotencyKey }),
      ...(record?.client === undefined ? {} : { client: record.client }),
      costCents: charge.cents,
    };
    if (isUnlimited(account))
      return appendEntry(tx, account, 0, charge.operation, { ...cost, plan: account.plan });
    return appendEntry(tx, account, -charge.cents, charge.operation, cost);
  }

  /** Moves the account to `plan`, as a `plan_change` entry of amount 0; no entry when it is on it already. */
  async function changePlan(tx: StoreTx, account: Account, plan: Plan): Promise<Account> {
    if (account.plan === plan) return account;
    return appendEntry(tx, { ...account, plan }, 0, 'plan_change', { plan });
  }

  /**
   * Checks that the agent can pay `charge`, runs `work`, debits, builds the response with `present` and
   * hands it to `record`, as one transaction. A failure anywhere (402 included) writes nothing. A charge
   * given as a function of the work's result is checked and debited after the work.
   */
  async function runCharged<T, R extends JsonObject>(
    agentId: string,
    charge: Charge | ((result: T) => Charge),
    work: (tx: StoreTx, account: Account) => Promise<T>,
    present: (result: T, account: Account) => R,
    record?: Recorder,
  ): Promise<R> {
    return store.transact(async (tx) => {
      const account = await loadAccount(tx, agentId);
      // A price known only from the work's result (an import's writes) is checked when debited, after it.
      if (typeof charge !== 'function') await assertCanSpend(tx, account, charge.cents);
      const result = await work(tx, account);
      const due = typeof charge === 'function' ? charge(result) : charge;
      const response = present(result, await debit(tx, account, due, record));
      if (record) await record(tx, response);
      return response;
    });
  }

  /**
   * Whether `store` runs charged operations as one statement each (charge-port.ts) for a request with
   * `record`: a recorder that writes the response itself (an idempotency key without a claim) needs the
   * transaction.
   */
  function inOneStatement(record: Recorder | undefined): boolean {
    return (
      store.charges !== undefined && (record?.idempotencyKey === undefined || record.claim !== undefined)
    );
  }

  /** The request of a charge that `store.charges` makes, now. */
  function chargeRequest(agentId: string, charge: Charge, record?: Recorder): ChargeRequest {
    const now = clock.now();
    return {
      agentId,
      at: now.toISOString(),
      cents: charge.cents,
      operation: charge.operation,
      entryId: `txn_${randomUUID()}`,
      ref: charge.ref ?? {},
      ...(record?.client === undefined ? {} : { client: record.client }),
      daily: {
        ...(limits.dailySpendCents === undefined ? {} : { payAsYouGo: limits.dailySpendCents }),
        ...(limits.unlimitedDailySpendCents === undefined
          ? {}
          : { unlimited: limits.unlimitedDailySpendCents }),
        since: utcDay(now).start,
      },
      ...(record?.claim === undefined ? {} : { claim: record.claim }),
    };
  }

  /**
   * The error of a refusal every charged operation may meet: what `runCharged` throws in the same case. Others
   * are the operation's own (its caller maps them first).
   */
  function refusalError(refusal: ChargeRefusal, cents: number): AppError {
    switch (refusal.refused) {
      case 'unauthorized':
        return noAccount();
      case 'insufficient_credits':
        return insufficientCredits(cents, Math.max(0, refusal.balanceCents));
      case 'daily_limit_reached':
        return dailyLimitReached(cents, refusal.spentCents, refusal.limitCents);
      default:
        return new AppError('internal', `The store refused a charge unexpectedly (${refusal.refused}).`);
    }
  }

  /**
   * A charge for an answer built before it (a search page, live data), as one statement (`store.charges`):
   * `answer` with the balance after the charge, or the refusal's error. `answer` is what a replay of the
   * request's idempotency key gets, its `credit_balance_cents` set by the store.
   */
  async function chargeAnswer<A extends JsonObject & { credit_balance_cents: number }>(
    agentId: string,
    charge: Charge,
    record: Recorder | undefined,
    answer: A,
  ): Promise<A> {
    const charges = store.charges as NonNullable<StorePort['charges']>;
    const outcome = await charges.charge(chargeRequest(agentId, charge, record), answer);
    if (outcome.refused !== undefined) throw refusalError(outcome, charge.cents);
    return { ...answer, credit_balance_cents: outcome.balanceCents };
  }

  return {
    dailyLimitOf,
    spentToday,
    checkCanSpend,
    credit,
    debit,
    changePlan,
    runCharged,
    inOneStatement,
    chargeRequest,
    chargeAnswer,
    refusalError,
  };
}

export type Ledger = ReturnType<typeof createLedger>;
