/**
 * Who sent a request, resolved once per request at the edge: the key it carries (X-API-Key or Authorization:
 * Bearer) and the account that key belongs to. The rate limiter, the REST routes and the MCP endpoint all
 * ask here, so one request costs one key lookup, however many of them look. At /mcp, with OAuth on, a bearer
 * that is not shaped as an API key (`ac_` and 43 characters) is an access token: the authorization server's check
 * (src/oauth/access-tokens.ts) says which account and client it is for, and what it may do.
 */
import type { Express, Request } from 'express';
import { isKeyShaped } from '../core/accounts.js';
import type { Core } from '../core/core.js';
import { AppError, toAppError } from '../core/errors.js';
import type { Account } from '../core/model.js';
import type { TokenGrant } from '../oauth/access-tokens.js';
import { MCP_PATH } from '../server-paths.js';
import { bearerToken, requestKey } from './request-key.js';

/** The resource server's check of an access token: undefined for one that is unknown, expired or not ours. */
export type VerifyAccessToken = (token: string) => Promise<TokenGrant | undefined>;

export interface Identity {
  /** The key the request carries, when it carries one. */
  key: string | undefined;
  /** The account of that key, when it is a known key. */
  account: Account | undefined;
  /** Why there is no account: no key, an unknown key, or two headers with different keys. */
  error: AppError | undefined;
  /** When the credential was an OAuth access token: what it grants. */
  token?: TokenGrant;
}

const ACCESS_TOKENS = Symbol('agent-context.access-tokens');

/** Turns on access tokens at /mcp for this app (the OAuth room's check). */
export function acceptAccessTokens(app: Express, verify: VerifyAccessToken): void {
  (app.locals as Record<symbol, unknown>)[ACCESS_TOKENS] = verify;
}

const TOKEN_REFUSED = new AppError(
  'unauthorized',
  'The access token is unknown, expired, revoked or for another resource: sign in again through OAuth, or send an API key.',
  { reason: 'invalid_token' },
);

async function resolveToken(token: string, verify: VerifyAccessToken, core: Core): Promise<Identity> {
  const grant = await verify(token);
  const account = grant && (await core.accounts.find(grant.agentId));
  if (!grant || !account) return { key: token, account: undefined, error: TOKEN_REFUSED };
  return { key: token, account, error: undefined, token: grant };
}

/** Where a request keeps its identity: a property of its own, under a symbol no one else knows. */
const IDENTITY = Symbol('agent-context.identity');
type IdentifiedRequest = Request & { [IDENTITY]?: Promise<Identity> };

async function resolve(req: Request, core: Core): Promise<Identity> {
  let key: string | undefined;
  try {
    const verify = (req.app?.locals as Record<symbol, VerifyAccessToken | undefined> | undefined)?.[
      ACCESS_TOKENS
    ];
    const bearer =
      verify && req.path === MCP_PATH && req.get('x-api-key') === undefined ? bearerToken(req) : undefined;
    if (verify && bearer !== undefined && !isKeyShaped(bearer))
      return await resolveToken(bearer, verify, core);
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
