/**
 * Rate limits (express-rate-limit, fixed windows from a client's first request), mounted only while
 * AC_RATE_LIMIT is on. Counted in memory per process, or, given the shared window counters (PostgreSQL),
 * across every instance through src/http/rate-limit-store.ts:
 *
 * - API, per minute: a request with a valid API key (X-API-Key or Bearer) counts against its account
 *   (keyed by account id: the key itself is neither a limiter key nor kept); a request with a missing,
 *   unknown or ambiguous key counts against its client address under the lower unauthenticated limit, so
 *   guessing keys is limited per address. REST and /mcp alike. Ping, the discovery documents, readiness
 *   and OPTIONS are not limited: they are static or cheap, touch no account, and a health probe must
 *   never be turned away.
 * - Registration, per hour: per client address and per e-mail domain. Only a body with a valid address
 *   (the register schema's own check) counts, whatever the outcome: a 409 counts (it tells whether an
 *   address is registered), a 400 does not (it created and revealed nothing; it still counts per minute).
 *
 * Every 429 is an AppError rendered by the one error handler, with Retry-After and the draft-8
 * `RateLimit` / `RateLimit-Policy` headers: draft-8 names each policy and appends rather than overwrites,
 * so a registration shows both its per-minute and per-hour policies, each with its own remaining count.
 * IPv6 clients are grouped by /56, as one customer usually holds a whole prefix.
 */
import { BlockList, isIPv4 } from 'node:net';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, type Options, rateLimit } from 'express-rate-limit';
import type { RateLimitConfig, TrustProxySetting } from '../config.js';
import type { Core } from '../core/core.js';
import { emailDomain } from '../core/email.js';
import { AppError } from '../core/errors.js';
import type { RestOperation } from '../core/operation-table.js';
import type { Logger } from '../logger.js';
import type { OAuthLimits } from '../oauth/authorization-server.js';
import type { WindowCounters } from '../store/window-counters.js';
import { CounterStore } from './rate-limit-store.js';
import { identify as identifyRequest } from './request-identity.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

export interface RateLimitOptions {
  core: Core;
  logger: Logger;
  limits: RateLimitConfig;
  trustProxy: TrustProxySetting;
  /** Paths never limited (ping, discovery documents, readiness). */
  unlimitedPaths: readonly string[];
  /** Paths whose whole subtree is not limited (the pages' static files: /console, /docs). */
  unlimitedPrefixes?: readonly string[];
  /** The REST operations: the registration route's path is taken from them. */
  operations: readonly RestOperation[];
  /** Counters every instance shares (PostgreSQL); without them each limiter counts in this process's memory. */
  counters?: WindowCounters;
}

/**
 * Claude's and ChatGPT's connectors call the token and registration endpoints from their own servers, for
 * every person who connects through them: the per-address limits there leave room for that. The per-client
 * limit of authorization requests is a ceiling against a runaway client, not a per-person limit: a client's
 * id is public, so a low one would let anyone lock every user of a client out.
 */
export const OAUTH_LIMITS = {
  anyPerMinutePerAddress: 300,
  authorizePerMinutePerAddress: 30,
  authorizePerMinutePerClient: 600,
  tokenPerMinutePerAddress: 300,
  registrationPerHourPerAddress: 60,
  signInPerMinutePerAddress: 10,
} as const;

export interface RateLimits {
  /** Per key or per address; mount before the body is read, so a limited request is not even parsed. */
  api: RequestHandler[];
  oauth: OAuthLimits;
  /** Registration per address and per domain; mount after the JSON body parser (it reads `email`). */
  register: { path: string; handlers: RequestHandler[] } | undefined;
}

/** What the API limiters know of a request: the account id behind a valid key, or nothing. */
interface Identity {
  agentId: string | undefined;
}

const IDENTITY = Symbol('rate-limit identity');
type Identified = Request & { [IDENTITY]?: Identity };

/** The client's address as the limiter key: Express's req.ip (trust proxy applied), IPv6 by /56. */
function addressKey(req: Request): string {
  return ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown');
}

function normalisedPath(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/u, '').toLowerCase() : path;
}

/** Private and loopback ranges: a peer there sending X-Forwarded-For is most likely a proxy. */
const PROXY_RANGES = new BlockList();
for (const [net, prefix] of [
  ['127.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  PROXY_RANGES.addSubnet(net, prefix, 'ipv4');
}
PROXY_RANGES.addAddress('::1', 'ipv6');
PROXY_RANGES.addSubnet('fc00::', 7, 'ipv6');

function looksLikeProxy(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return isIPv4(v4) ? PROXY_RANGES.check(v4, 'ipv4') : PROXY_RANGES.check(address, 'ipv6');
}

function limiterLogger(logger: Logger): Options['logger'] {
  return {
    warn: (err, message) => logger.warn({ err }, message ?? 'express-rate-limit'),
    error: (err, message) => logger.error({ err }, message ?? 'express-rate-limit'),
  };
}

interface LimiterSpec {
  /** The policy's name in the RateLimit headers. */
  name: string;
  windowMs: number;
  limit: number;
  key: (req: Request) => string | Promise<string>;
  skip: (req: Request) => boolean;
  /** The 429 sentence: what was exceeded and when to retry. */
  sentence: (req: Request, retryAfterS: number) => string;
}

function limiter(spec: LimiterSpec, logger: Logger, counters: WindowCounters | undefined): RequestHandler {
  const property = `rateLimit_${spec.name.replace(/\W/gu, '_')}`;
  const shared: Partial<Options> = counters
    ? {
        store: new CounterStore(counters, { prefix: `${spec.name}:`, windowMs: spec.windowMs }),
        // Fail open: when the counters fail, the request goes on uncounted and the error is logged. With the
        // database out of reach, every request that would read or change anything fails with 503 from the
        // store anyway (a key is resolved to its account before the limiters), and what is left (a 401, a
        // 404) does nothing, so refusing here would add nothing; and a fault of the counters alone (a
        // statement timeout on a hot row) must not turn away requests the store can serve.
        passOnStoreError: true,
      }
    : {};
  return rateLimit({
    ...shared,
    windowMs: spec.windowMs,
    limit: spec.limit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: spec.name,
    requestPropertyName: property,
    keyGenerator: (req) => spec.key(req),
    skip: (req) => spec.skip(req),
    handler: (req: Request, res: Response, next) => {
      const info = (req as unknown as Record<string, { resetTime?: Date } | undefined>)[property];
      const resetAt = info?.resetTime?.getTime() ?? Date.now() + spec.windowMs;
      const seconds = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
      res.set('Retry-After', String(seconds));
      next(new AppError('rate_limited', spec.sentence(req, seconds), { retry_after_s: seconds }));
    },
    logger: limiterLogger(logger),
  });
}

export function createRateLimits(options: RateLimitOptions): RateLimits {
  const { core, logger, limits } = options;
  const unlimited = new Set(options.unlimitedPaths.map(normalisedPath));
  const prefixes = (options.unlimitedPrefixes ?? []).map(normalisedPath);
  const exempt = (req: Request) => {
    if (req.method === 'OPTIONS') return true;
    const path = normalisedPath(req.path);
    return unlimited.has(path) || prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  };
  const identity = (req: Request): Identity => (req as Identified)[IDENTITY] ?? { agentId: undefined };

  if (options.trustProxy === true) {
    logger.warn(
      'AC_TRUST_PROXY=true trusts every X-Forwarded-For entry: a client that reaches the server directly can ' +
        "pick its own address and escape the per-address limits; set the proxy's hop count (1) or address instead",
    );
  }
  let warnedForwarded = false;

  /** Resolves the key to an account once, before the limiters; keeps only the account id. */
  const identify: RequestHandler = async (req, _res, next) => {
    if (exempt(req)) return next();
    if (
      !warnedForwarded &&
      options.trustProxy === false &&
      req.headers['x-forwarded-for'] !== undefined &&
      looksLikeProxy(req.socket.remoteAddress)
    ) {
      warnedForwarded = true;
      logger.warn(
        'a request from a private address carries X-Forwarded-For but AC_TRUST_PROXY is unset: behind a proxy, ' +
          "every client shares the proxy's address for rate limits; set AC_TRUST_PROXY to the proxy's hop count or address",
      );
    }
    // Missing, unknown, or two different keys: limited per address; the route answers the error.
    const agentId = (await identifyRequest(req, core)).account?.id;
    (req as Identified)[IDENTITY] = { agentId };
    next();
  };

  const perKey = limiter(
    {
      name: 'per-key',
      windowMs: MINUTE_MS,
      limit: limits.perKeyPerMinute,
      key: (req) => `agent:${identity(req).agentId}`,
      skip: (req) => exempt(req) || identity(req).agentId === undefined,
      sentence: (_req, s) =>
        `Too many requests for this API key (at most ${limits.perKeyPerMinute} a minute); nothing was ` +
        `done or charged: retry in ${s} s, as the Retry-After header says.`,
    },
    logger,
    options.counters,
  );

  const unauthenticated = limiter(
    {
      name: 'unauthenticated',
      windowMs: MINUTE_MS,
      limit: limits.unauthenticatedPerMinute,
      key: (req) => `address:${addressKey(req)}`,
      skip: (req) => exempt(req) || identity(req).agentId !== undefined,
      sentence: (_req, s) =>
        `Too many requests without a valid API key from this address (at most ${limits.unauthenticatedPerMinute} ` +
        `a minute): retry in ${s} s, as the Retry-After header says, or send a valid key ` +
        '(X-API-Key or Authorization: Bearer), which has its own, higher limit.',
    },
    logger,
    options.counters,
  );

  /** The domain of the body's address when the register schema accepts it, else undefined (not counted). */
  const EmailSchema = core.schemas.RegisterInput.shape.email;
  const domains = new WeakMap<Request, string | undefined>();
  const domainOf = (req: Request): string | undefined => {
    if (domains.has(req)) return domains.get(req);
    const body: unknown = req.body;
    const parsed =
      typeof body === 'object' && body !== null
        ? EmailSchema.safeParse((body as { email?: unknown }).email)
        : undefined;
    const domain = parsed?.success ? emailDomain(parsed.data) : undefined;
    domains.set(req, domain);
    return domain;
  };

  const registerPerAddress = limiter(
    {
      name: 'register-per-address',
      windowMs: HOUR_MS,
      limit: limits.registerPerHourPerAddress,
      key: (req) => `address:${addressKey(req)}`,
      skip: (req) => domainOf(req) === undefined,
      sentence: (_req, s) =>
        `Too many registrations from this address (at most ${limits.registerPerHourPerAddress} an hour): ` +
        `retry in ${s} s, as the Retry-After header says; an agent that already has a key should keep using it.`,
    },
    logger,
    options.counters,
  );

  const registerPerDomain = limiter(
    {
      name: 'register-per-domain',
      windowMs: HOUR_MS,
      limit: limits.registerPerHourPerDomain,
      key: (req) => `domain:${domainOf(req)}`,
      skip: (req) => domainOf(req) === undefined,
      sentence: (req, s) =>
        `Too many registrations for addresses at ${domainOf(req)} (at most ${limits.registerPerHourPerDomain} ` +
        `an hour): retry in ${s} s, as the Retry-After header says.`,
    },
    logger,
    options.counters,
  );

  const oauthLimit = (
    name: string,
    windowMs: number,
    limit: number,
    key: (req: Request) => string | undefined,
    what: string,
  ) =>
    limiter(
      {
        name,
        windowMs,
        limit,
        key: (req) => `${key(req)}`,
        skip: (req) => key(req) === undefined,
        sentence: (_req, s) =>
          `Too many ${what} (at most ${limit} ${windowMs === HOUR_MS ? 'an hour' : 'a minute'}): retry in ${s} s, as the Retry-After header says.`,
      },
      logger,
      options.counters,
    );
  const byAddress = (req: Request) => `address:${addressKey(req)}`;
  const byClient = (req: Request) =>
    typeof req.query.client_id === 'string' && req.query.client_id.length <= 2048
      ? `client:${req.query.client_id}`
      : undefined;
  const oauth: OAuthLimits = {
    any: [
      oauthLimit(
        'oauth-any-per-address',
        MINUTE_MS,
        OAUTH_LIMITS.anyPerMinutePerAddress,
        byAddress,
        'requests to the authorization server from this address',
      ),
    ],
    authorize: [
      oauthLimit(
        'oauth-authorize-per-address',
        MINUTE_MS,
        OAUTH_LIMITS.authorizePerMinutePerAddress,
        byAddress,
        'authorization requests from this address',
      ),
      oauthLimit(
        'oauth-authorize-per-client',
        MINUTE_MS,
        OAUTH_LIMITS.authorizePerMinutePerClient,
        byClient,
        'authorization requests for this client',
      ),
    ],
    token: [
      oauthLimit(
        'oauth-token-per-address',
        MINUTE_MS,
        OAUTH_LIMITS.tokenPerMinutePerAddress,
        byAddress,
        'token requests from this address',
      ),
    ],
    registration: [
      oauthLimit(
        'oauth-registration-per-address',
        HOUR_MS,
        OAUTH_LIMITS.registrationPerHourPerAddress,
        byAddress,
        'client registrations from this address',
      ),
    ],
    signIn: [
      oauthLimit(
        'oauth-sign-in-per-address',
        MINUTE_MS,
        OAUTH_LIMITS.signInPerMinutePerAddress,
        byAddress,
        'sign-in attempts from this address',
      ),
    ],
    register: [registerPerAddress, registerPerDomain],
  };

  const registerPath = options.operations.find((op) => op.name === 'register')?.http.path;
  return {
    api: [identify, perKey, unauthenticated],
    oauth,
    register:
      registerPath === undefined
        ? undefined
        : { path: registerPath, handlers: [registerPerAddress, registerPerDomain] },
  };
}
