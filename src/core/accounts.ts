/**
 * Accounts and keys: self-registration with starter credit, authentication by API key, account views,
 * ledger history, and operator top-ups. Keys are 256 random bits with an `ac_` prefix, stored only as a
 * SHA-256 hash (a fast hash suffices for keys of that entropy) and compared in constant time.
 */
import { Buffer } from 'node:buffer';
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import { type Ledger, loadAccount } from './ledger.js';
import { type Account, costOf, type LedgerEntry } from './model.js';
import { readCursor, writeCursor } from './page-cursor.js';
import { PRICES } from './pricing.js';
import type { Input, Output } from './schemas.js';
import type { StorePort } from './store-port.js';

export const KEY_PREFIX = 'ac_';

/** Whether a credential has the shape of an API key (`ac_` and 43 base64url characters), not what it unlocks. */
export function isKeyShaped(value: string): boolean {
  return /^ac_[\w-]{43}$/u.test(value);
}

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export const KEY_MISSING = 'Missing API key.';
export const KEY_UNKNOWN = 'Unknown API key: check it was copied whole.';
export const HOW_TO_AUTHENTICATE =
  'Send the key as "X-API-Key: <key>" or "Authorization: Bearer <key>"; get a key with POST /api/ac/register.';

export function createAccounts(store: StorePort, ledger: Ledger, clock: Clock) {
  async function register(input: Input<'RegisterInput'>): Promise<Output<'RegisterOutput'>> {
    const key = generateKey();
    const account = await store.transact(async (tx) => {
      if (await tx.findAccountByEmail(input.email)) {
        throw new AppError(
          'conflict',
          `An account for ${input.email} already exists; use its key, or register with another e-mail address.`,
          { field: 'email' },
        );
      }
      const created: Account = {
        id: `agt_${randomBytes(12).toString('base64url')}`,
        email: input.email,
        name: input.name ?? null,
        plan: 'pay-as-you-go',
        keyHash: hashKey(key),
        balanceCents: 0,
        createdAt: clock.now().toISOString(),
      };
      await tx.putAccount(created);
      return ledger.credit(tx, created, PRICES.starterCredit, 'starter_credit');
    });
    return {
      agent_key: key,
      credit_balance_cents: account.balanceCents,
      plan: account.plan,
      email: account.email,
      name: account.name,
      created_at: account.createdAt,
    };
  }

  /** The account that owns `key`; `unauthorized` when the key is missing or unknown. */
  async function authenticate(key: string | undefined): Promise<Account> {
    if (!key)
      throw new AppError('unauthorized', `${KEY_MISSING} ${HOW_TO_AUTHENTICATE}`, { reason: 'missing_key' });
    const keyHash = hashKey(key);
    const account = await store.read((reader) => reader.findAccountByKeyHash(keyHash));
    if (!account || !timingSafeEqual(Buffer.from(account.keyHash, 'hex'), Buffer.from(keyHash, 'hex'))) {
      throw new AppError('unauthorized', `${KEY_UNKNOWN} ${HOW_TO_AUTHENTICATE}`, { reason: 'unknown_key' });
    }
    return account;
  }

  /** The account with this id, or undefined (a credential issued for an account that is gone). */
  function find(agentId: string): Promise<Account | undefined> {
    return store.read((reader) => reader.getAccount(agentId));
  }

  async function info(agentId: string): Promise<Output<'AccountOutput'>> {
    const account = await store.read((reader) => loadAccount(reader, agentId));
    return {
      email: account.email,
      name: account.name,
      plan: account.plan,
      credit_balance_cents: account.balanceCents,
      created_at: account.createdAt,
    };
  }

  async function transactions(
    agentId: string,
    input: Input<'TransactionsInput'>,
  ): Promise<Output<'TransactionsOutput'>> {
    const before = input.cursor === undefined ? undefined : readCursor(input.cursor, ledgerPosition);
    const [account, page] = await Promise.all([
      store.read((reader) => loadAccount(reader, agentId)),
      store.ledgerPage(agentId, { limit: input.limit, ...(before === undefined ? {} : { before }) }),
    ]);
    const list = page.entries.map(toTransactionView);
    // The first page's newest entry holds the balance as of the page read (every change of a balance is an
    // entry), so the balance shown agrees with the entries even when a charge lands between the two reads.
    const newest = before === undefined ? page.entries[0] : undefined;
    return {
      transactions: list,
      count: list.length,
      credit_balance_cents: newest ? newest.balanceAfterCents : account.balanceCents,
      next_cursor: page.next === undefined ? null : writeCursor({ b: page.next }),
    };
  }

  /** Account and recent ledger entries in one view (the MCP `account_info` tool and resource). */
  async function accountInfo(
    agentId: string,
    input: Input<'AccountInfoInput'>,
  ): Promise<Output<'AccountInfoOutput'>> {
    const [account, history] = await Promise.all([info(agentId), transactions(agentId, input)]);
    return { ...account, recent_transactions: history.transactions };
  }

  async function addCredits(input: Input<'AddCreditsInput'>): Promise<Output<'AddCreditsOutput'>> {
    const account = await store.transact(async (tx) => {
      const found = await tx.findAccountByEmail(input.email);
      if (!found) {
        throw new AppError('not_found', `No account is registered with ${input.email}; check the address.`, {
          field: 'email',
        });
      }
      return ledger.credit(tx, found, input.cents, 'top_up');
    });
    return {
      success: true,
      email: account.email,
      credited_cents: input.cents,
      credit_balance_cents: account.balanceCents,
    };
  }

  /** Moves the account registered with `email` to `plan` (operator); a `plan_change` ledger entry. */
  async function setPlan(input: Input<'SetPlanInput'>): Promise<Output<'SetPlanOutput'>> {
    const [before, after] = await store.transact(async (tx) => {
      const found = await tx.findAccountByEmail(input.email);
      if (!found) {
        throw new AppError('not_found', `No account is registered with ${input.email}; check the address.`, {
          field: 'email',
        });
      }
      return [found, await ledger.changePlan(tx, found, input.plan)] as const;
    });
    return {
      success: true,
      email: after.email,
      plan: after.plan,
      previous_plan: before.plan,
      changed: before.plan !== after.plan,
      credit_balance_cents: after.balanceCents,
    };
  }

  /** Replaces the account's key with a new one; the old key stops working with this commit. */
  async function rotateKey(agentId: string): Promise<Output<'RotateKeyOutput'>> {
    const key = generateKey();
    const rotatedAt = clock.now().toISOString();
    const account = await store.transact(async (tx) => {
      const updated = { ...(await loadAccount(tx, agentId)), keyHash: hashKey(key) };
      await tx.putAccount(updated);
      return updated;
    });
    return {
      agent_key: key,
      credit_balance_cents: account.balanceCents,
      plan: account.plan,
      rotated_at: rotatedAt,
    };
  }

  return { register, authenticate, find, info, transactions, accountInfo, addCredits, setPlan, rotateKey };
}

export type Accounts = ReturnType<typeof createAccounts>;

/** A ledger cursor's position: a positive integer. */
function ledgerPosition(body: Record<string, unknown>): number | undefined {
  return Number.isSafeInteger(body.b) && (body.b as number) > 0 ? (body.b as number) : undefined;
}

function toTransactionView(entry: LedgerEntry) {
  return {
    id: entry.id,
    at: entry.at,
    operation: entry.operation,
    amount_cents: entry.amountCents,
    balance_after_cents: entry.balanceAfterCents,
    ...(costOf(entry) > 0 ? { cost_cents: costOf(entry) } : {}),
    ...(entry.plan === undefined ? {} : { plan: entry.plan }),
    ...(entry.memoryKey === undefined ? {} : { memory_key: entry.memoryKey }),
    ...(entry.queryType === undefined ? {} : { query_type: entry.queryType }),
    ...(entry.query === undefined ? {} : { query: entry.query }),
    ...(entry.client === undefined ? {} : { client: entry.client }),
  };
}
