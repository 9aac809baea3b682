/**
 * Who sent a request, resolved once per request at the edge: the key it carries (X-API-Key or Authorization:
 * Bearer) and the account that key belongs to. The rate limiter, the REST routes and the MCP endpoint all
 * ask here, so one request costs one key lookup, however many of them look.
 */
import type { Request } from 'express';
import type { Core } from '../core/core.js';
import { AppError, toAppError } from '../core/errors.js';
import type { Account } from '../core/model.js';
import { requestKey } from './request-key.js';

export interface Identity {
  /** The key the request carries, when it carries one. */
  key: string | undefined;
  /** The account of that key, when it is a known key. */
  account: Account | undefined;
  /** Why there is no account: no key, an unknown key, or two headers with different keys. */
  error: AppError | undefined;
}

/** Where a request keeps its identity: a property of its own, under a symbol no one else knows. */
const IDENTITY = Symbol('agent-context.identity');
type IdentifiedRequest = Request & { [IDENTITY]?: Promise<Identity> };

async function resolve(req: Request, core: Core): Promise<Identity> {
  let key: string | undefined;
  try {
    key = requestKey(req);
    return { key, account: await core.accounts.authenticate(key), error: undefined };
  } catch (err) {
    return { key, account: undefined, error: toAppError(err) };
  }
}

/** The request's identity, looked up on the first call and remembered for the request's lifetime. */
export function identify(req: Request, core: Core): Promise<Identity> {
  const identified = req as IdentifiedRequest;
  identified[IDENTITY] ??= resolve(req, core);
  return identified[IDENTITY];
}

/** The request's account; throws what authentication found (401 without or with an unknown key, 400 for two). */
export async function requireAccount(req: Request, core: Core): Promise<Account> {
  const { account, error } = await identify(req, core);
  if (account) return account;
  throw error ?? new AppError('internal', 'The request was neither authenticated nor refused.');
}
