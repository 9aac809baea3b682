/**
 * The ledger: every change of a balance is one appended entry, written in the same transaction as the
 * account's new balance, so the balance always equals the sum of the entries and never goes below zero.
 * `runCharged` is the one path every priced operation takes: check the balance, do the work, debit, all
 * in one transaction; if the work fails, nothing is written and nothing is charged.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import type { Account, LedgerEntry, LedgerOperation } from './model.js';
import type { StorePort, StoreReader, StoreTx } from './store-port.js';

/** What a ledger entry concerns, shown in the account's transactions. */
export type LedgerRef = Pick<LedgerEntry, 'memoryKey' | 'queryType' | 'query'>;

export interface Charge {
  cents: number;
  operation: LedgerOperation;
  ref?: LedgerRef;
}

export function insufficientCredits(required: number, balance: number): AppError {
  return new AppError(
    'insufficient_credits',
    `This operation costs ${required} cents but the balance is ${balance} cents; nothing was charged. ` +
      'Ask the operator to top up the account, or use free operations (delete, cached data).',
    { required_cents: required, credit_balance_cents: balance },
  );
}

async function appendEntry(
  tx: StoreTx,
  account: Account,
  amountCents: number,
  operation: LedgerOperation,
  at: string,
  ref: LedgerRef = {},
): Promise<Account> {
  const balanceAfterCents = account.balanceCents + amountCents;
  if (balanceAfterCents < 0) throw insufficientCredits(-amountCents, account.balanceCents);
  const entry: LedgerEntry = {
    id: `txn_${randomUUID()}`,
    agentId: account.id,
    at,
    operation,
    amountCents,
    balanceAfterCents,
    ...ref,
  };
  const updated = { ...account, balanceCents: balanceAfterCents };
  await tx.appendLedger(entry);
  await tx.putAccount(updated);
  return updated;
}

/** Adds credit (starter credit, top-up) inside a transaction. */
export function credit(
  tx: StoreTx,
  account: Account,
  cents: number,
  operation: LedgerOperation,
  clock: Clock,
) {
  return appendEntry(tx, account, cents, operation, clock.now().toISOString());
}

/** Debits inside a transaction; throws `insufficient_credits` (and writes nothing) when the balance is short. */
export function debit(tx: StoreTx, account: Account, charge: Charge, clock: Clock): Promise<Account> {
  if (charge.cents === 0) return Promise.resolve(account);
  return appendEntry(tx, account, -charge.cents, charge.operation, clock.now().toISOString(), charge.ref);
}

/** The agent's account; `unauthorized` when it is gone (its key was valid when the request began). */
export async function loadAccount(reader: StoreReader, agentId: string): Promise<Account> {
  const account = await reader.getAccount(agentId);
  if (!account)
    throw new AppError('unauthorized', 'This API key no longer belongs to an account; register again.');
  return account;
}

/**
 * Checks that the agent can pay `charge`, runs `work`, then debits, as one transaction.
 * A failure anywhere (402 included) writes nothing.
 */
export async function runCharged<T>(
  store: StorePort,
  clock: Clock,
  agentId: string,
  charge: Charge,
  work: (tx: StoreTx, account: Account) => Promise<T>,
): Promise<{ result: T; account: Account }> {
  return store.transact(async (tx) => {
    const account = await loadAccount(tx, agentId);
    if (account.balanceCents < charge.cents) throw insufficientCredits(charge.cents, account.balanceCents);
    const result = await work(tx, account);
    const after = await debit(tx, account, charge, clock);
    return { result, account: after };
  });
}
