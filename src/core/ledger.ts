/**
 * The ledger: every change of a balance is one appended entry, written in the same transaction (or statement)
 * as the account's new balance, so the balance always equals the sum of the entries and never goes below zero.
 * The rules of a charge are here, once: whether an account can pay (`spendRefusal`), the entry a charge
 * appends (`chargeEntry`), and the error of each refusal (`refusalError`). A charged operation reaches the
 * store through the charge port (charge-port.ts), whose every implementation applies these functions or, in
 * SQL, their copy pinned by the store contract suite; the few transactions of the core that change a
 * balance otherwise (starter credit, top-up, plan change, a delete) go through `runCharged` and `credit`.
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
import type { StorePort, StoreTx } from './store-port.js';
import type { StoreReader } from './store-reader.js';

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

/** The daily spending limit of `account`'s plan under a charge's `daily` limits (undefined: none). */
export function dailyLimitIn(account: Account, daily: ChargeRequest['daily']): number | undefined {
  return isUnlimited(account) ? daily.unlimited : daily.payAsYouGo;
}

/**
 * Why `account` cannot pay `cents` now, or undefined when it can: too low a balance (on the pay-as-you-go
 * plan), or past its plan's daily `limit` given what it `spent` today (undefined: not counted, no limit).
 * `held` is what the agent has reserved for work in flight (live-data fetches). A free charge always passes.
 */
export function spendRefusal(
  account: Account,
  cents: number,
  held: number,
  spent: number | undefined,
  limit: number | undefined,
): ChargeRefusal | undefined {
  if (cents === 0) return undefined;
  const available = account.balanceCents - held;
  if (!isUnlimited(account) && available < cents)
    return { refused: 'insufficient_credits', balanceCents: available };
  if (limit === undefined || spent === undefined) return undefined;
  if (spent + held + cents > limit)
    return { refused: 'daily_limit_reached', spentCents: spent + held, limitCents: limit };
  return undefined;
}

type EntryFields = Pick<
  LedgerEntry,
  'memoryKey' | 'queryType' | 'query' | 'idempotencyKey' | 'costCents' | 'plan' | 'client'
>;

/** The entry that moves `account`'s balance by `amountCents`, and the account after it. */
function entryOf(
  account: Account,
  id: string,
  at: string,
  operation: LedgerOperation,
  amountCents: number,
  extra: EntryFields = {},
): { entry: LedgerEntry; account: Account } {
  const entry: LedgerEntry = {
    id,
    agentId: account.id,
    at,
    operation,
    amountCents,
    balanceAfterCents: account.balanceCents + amountCents,
    ...extra,
  };
  return { entry, account: { ...account, balanceCents: entry.balanceAfterCents } };
}

/**
 * The ledger entry of `request` charged to `account` (that can pay it: `spendRefusal`), and the account after
 * it; undefined for a free charge, which writes no entry. On the unlimited plan the entry records the cost
 * with an amount of 0: the balance is untouched and still equals the sum of the amounts, and the cost stays
 * visible.
 */
export function chargeEntry(
  account: Account,
  request: ChargeRequest,
): { entry: LedgerEntry; account: Account } | undefined {
  if (request.cents === 0) return undefined;
  const cost: EntryFields = {
    ...request.ref,
    ...(request.claim === undefined ? {} : { idempotencyKey: request.claim.key }),
    ...(request.client === undefined ? {} : { client: request.client }),
    costCents: request.cents,
  };
  const { entryId, at, operation } = request;
  if (isUnlimited(account))
    return entryOf(account, entryId, at, operation, 0, { ...cost, plan: account.plan });
  return entryOf(account, entryId, at, operation, -request.cents, cost);
}

export function createLedger(
  store: StorePort,
  clock: Clock,
  limits: Pick<Limits, 'dailySpendCents' | 'unlimitedDailySpendCents'>,
) {
  /** The daily limits of a charge made now. */
  function dailyLimits(now: Date): ChargeRequest['daily'] {
    return {
      ...(limits.dailySpendCents === undefined ? {} : { payAsYouGo: limits.dailySpendCents }),
      ...(limits.unlimitedDailySpendCents === undefined
        ? {}
        : { unlimited: limits.unlimitedDailySpendCents }),
      since: utcDay(now).start,
    };
  }

  /** The daily spending limit of the account's plan, if it has one. */
  function dailyLimitOf(account: Account): number | undefined {
    return dailyLimitIn(account, dailyLimits(clock.now()));
  }

  /** What the agent has spent today (UTC), when a daily limit applies to it; otherwise `undefined`. */
  async function spentToday(reader: StoreReader, account: Account): Promise<number | undefined> {
    if (dailyLimitOf(account) === undefined) return undefined;
    return reader.spentSince(account.id, utcDay(clock.now()).start);
  }

  /**
   * Throws when `account` cannot pay `cents` now (`spendRefusal`; `spent` is `spentToday`, `held` what the
   * agent has reserved). Synchronous, so that a caller can check and reserve with nothing in between.
   */
  function checkCanSpend(account: Account, cents: number, held: number, spentSoFar: number | undefined) {
    const refusal = spendRefusal(account, cents, held, spentSoFar, dailyLimitOf(account));
    if (refusal) throw refusalError(refusal, cents);
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

  async function append(tx: StoreTx, next: { entry: LedgerEntry; account: Account }): Promise<Account> {
    await tx.appendLedger(next.entry);
    await tx.putAccount(next.account);
    return next.account;
  }

  /** Adds credit (starter credit, top-up) inside a transaction. */
  function credit(tx: StoreTx, account: Account, cents: number, operation: LedgerOperation) {
    return append(tx, entryOf(account, `txn_${randomUUID()}`, clock.now().toISOString(), operation, cents));
  }

  /** Debits inside a transaction (`chargeEntry`); throws (and so writes nothing) when the agent cannot pay. */
  async function debit(tx: StoreTx, account: Account, charge: Charge, record?: Recorder): Promise<Account> {
    if (charge.cents === 0) return account;
    checkCanSpend(account, charge.cents, 0, await spentToday(tx, account));
    const next = chargeEntry(account, chargeRequest(account.id, charge, record));
    return next ? append(tx, next) : account;
  }

  /** Moves the account to `plan`, as a `plan_change` entry of amount 0; no entry when it is on it already. */
  async function changePlan(tx: StoreTx, account: Account, plan: Plan): Promise<Account> {
    if (account.plan === plan) return account;
    const at = clock.now().toISOString();
    return append(tx, entryOf({ ...account, plan }, `txn_${randomUUID()}`, at, 'plan_change', 0, { plan }));
  }

  /**
   * Checks that the agent can pay `charge`, runs `work`, debits, builds the response with `present` and
   * hands it to `record`, as one transaction: the path of a charged operation outside the charge port (a
   * delete). A failure anywhere (402 included) writes nothing.
   */
  async function runCharged<T, R extends JsonObject>(
    agentId: string,
    charge: Charge,
    work: (tx: StoreTx, account: Account) => Promise<T>,
    present: (result: T, account: Account) => R,
    record?: Recorder,
  ): Promise<R> {
    return store.transact(async (tx) => {
      const account = await loadAccount(tx, agentId);
      if (charge.cents > 0) checkCanSpend(account, charge.cents, 0, await spentToday(tx, account));
      const result = await work(tx, account);
      const response = present(result, await debit(tx, account, charge, record));
      if (record) await record(tx, response);
      return response;
    });
  }

  /** The request of a charge through the charge port, now. */
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
      daily: dailyLimits(now),
      ...(record?.claim === undefined ? {} : { claim: record.claim }),
    };
  }

  /**
   * The error of a refusal every charged operation may meet. Others are the operation's own (its caller maps
   * them first).
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
   * A charge for an answer built before it (a search page, live data), through the charge port: `answer`
   * with the balance after the charge, or the refusal's error. `answer` is what a replay of the request's
   * idempotency key gets, its `credit_balance_cents` set by the store.
   */
  async function chargeAnswer<A extends JsonObject & { credit_balance_cents: number }>(
    agentId: string,
    charge: Charge,
    record: Recorder | undefined,
    answer: A,
  ): Promise<A> {
    const outcome = await store.charges.charge(chargeRequest(agentId, charge, record), answer);
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
    chargeRequest,
    chargeAnswer,
    refusalError,
  };
}

export type Ledger = ReturnType<typeof createLedger>;
