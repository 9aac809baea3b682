/**
 * The authorization server and the resource server's metadata as one piece that the HTTP face mounts
 * (before its JSON body parser: the token endpoint takes form bodies, which oidc-provider reads itself):
 *
 * - RFC 9728 protected resource metadata for /mcp, path-aware and at the root;
 * - RFC 8414 authorization server metadata (oidc-provider's discovery document, also at its OpenID path);
 * - the endpoints oidc-provider answers under /oauth (authorize, token, register, revoke, jwks);
 * - the sign-in and consent pages, and their style sheet;
 * - the console's list of allowed clients and their revocation (/api/ac/oauth/clients, with the API key),
 *   mounted apart (`mountApi`), after the API's rate limits.
 *
 * The resource server's check of a token (`accessTokens`) is used by the HTTP face at /mcp.
 */
import { type Express, type Request, type RequestHandler, type Response, Router } from 'express';
import type { Account } from '../core/model.js';
import type { OAuthRecords } from '../store/oauth-records.js';
import { type AccessTokens, createAccessTokens } from './access-tokens.js';
import { connectedAppsRoutes } from './connected-apps-routes.js';
import { createConsents } from './consents.js';
import { type InteractionDeps, interactionRoutes } from './interaction-routes.js';
import {
  AS_METADATA_PATH,
  isProviderPath,
  OAUTH_ROUTES,
  OPENID_CONFIGURATION_PATH,
  RESOURCE_METADATA_PATHS,
} from './oauth-paths.js';
import { createProvider, PEER_HEADER } from './oauth-provider.js';
import { type OAuthSettings, RESOURCE_SCOPES } from './oauth-settings.js';
import { OAUTH_CSS } from './pages/oauth-css.js';

export interface AuthorizationServerDeps {
  settings: OAuthSettings;
  records: OAuthRecords;
  authenticate: InteractionDeps['authenticate'];
  findAccount: InteractionDeps['findAccount'];
  register: InteractionDeps['register'];
  /** The account of the request's API key (the console's calls); throws the HTTP face's 401. */
  accountOf(req: Request): Promise<Account>;
  onError(err: unknown): void;
  /** An unexpected failure inside the authorization server (answered 500 server_error): logged with its cause. */
  onServerError(err: unknown): void;
}

/**
 * The authorization server's rate limits, built by the HTTP face (http/rate-limits.ts; fixed numbers,
 * docs/operations.md) and mounted here: per address, and per client where the request names one.
 */
export interface OAuthLimits {
  /** Every path under /oauth: per address. */
  any: RequestHandler[];
  /** GET /oauth/authorize: per address and per client_id. */
  authorize: RequestHandler[];
  /** POST /oauth/token and /oauth/revoke: per address. */
  token: RequestHandler[];
  /** POST /oauth/register (dynamic client registration): per address. */
  registration: RequestHandler[];
  /** The sign-in page's key check: per address. */
  signIn: RequestHandler[];
  /** The sign-in page's new account: the registration limits of POST /api/ac/register (after the form is read). */
  register: RequestHandler[];
}

export interface AuthorizationServer {
  settings: OAuthSettings;
  accessTokens: AccessTokens;
  /** Mounts the authorization server and its pages on `app`, before its rate limits and JSON body parser. */
  mount(app: Express, limits: OAuthLimits): void;
  /** Mounts the console's Connected apps routes, after the API's rate limits (they take the API key). */
  mountApi(app: Express): void;
  /** Revokes everything an account allowed (before its key is rotated). */
  revokeAccount(agentId: string): Promise<void>;
}

export async function createAuthorizationServer(deps: AuthorizationServerDeps): Promise<AuthorizationServer> {
  const { settings } = deps;
  const consents = createConsents(deps.records);
  const provider = await createProvider({
    settings,
    records: deps.records,
    findAccount: deps.findAccount,
    rememberedGrant: async (accountId, clientId) => (await consents.get(accountId, clientId))?.grantId,
    onServerError: deps.onServerError,
  });
  const accessTokens = createAccessTokens(provider, settings, consents, deps.onError);
  const callback = provider.callback();
  const issuer = new URL(settings.issuer);
  /** Hands a request to oidc-provider as one made at the issuer (see oauth-provider.ts). */
  const answer = (req: Request, res: Response) => {
    req.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
    req.headers['x-forwarded-host'] = issuer.host;
    req.headers[PEER_HEADER] = req.ip ?? req.socket.remoteAddress ?? '';
    callback(req, res);
  };

  function mount(app: Express, limits: OAuthLimits): void {
    const router = Router();
    const resourceMetadata = {
      resource: settings.resource,
      authorization_servers: [settings.issuer],
      scopes_supported: [...RESOURCE_SCOPES],
      bearer_methods_supported: ['header'],
      resource_name: 'agent-context',
      resource_documentation: `${settings.issuer}/docs`,
    };
    for (const path of RESOURCE_METADATA_PATHS) {
      router.get(path, (_req, res) => {
        res.set('Access-Control-Allow-Origin', '*').json(resourceMetadata);
      });
    }
    // RFC 8414's path: oidc-provider's own discovery document, which already has everything it asks for.
    router.get(AS_METADATA_PATH, (req, res) => {
      req.url = OPENID_CONFIGURATION_PATH;
      answer(req, res);
    });
    router.get('/oauth/assets/oauth.css', (_req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=3600');
      res.type('text/css').send(OAUTH_CSS);
    });
    // Express refuses a route without a handler: with the rate limits off (AC_RATE_LIMIT=off) there are none.
    if (limits.any.length > 0) router.use('/oauth', ...limits.any);
    if (limits.authorize.length > 0) router.use(OAUTH_ROUTES.authorization, ...limits.authorize);
    if (limits.token.length > 0) {
      router.post(OAUTH_ROUTES.token, ...limits.token);
      router.post(OAUTH_ROUTES.revocation, ...limits.token);
    }
    if (limits.registration.length > 0) router.post(OAUTH_ROUTES.registration, ...limits.registration);
    // An authorization request without `scope` asks for every scope of the resource (the consent page shows
    // them): without one, the grant would be empty and the person's Allow would end in access_denied.
    router.get(OAUTH_ROUTES.authorization, (req, _res, next) => {
      const url = new URL(req.url, 'http://local');
      if (!url.searchParams.has('scope')) {
        url.searchParams.set('scope', RESOURCE_SCOPES.join(' '));
        req.url = `${url.pathname}${url.search}`;
      }
      next();
    });
    router.use((req, res, next) => {
      if (isProviderPath(req.path)) answer(req, res);
      else next();
    });
    router.use(
      interactionRoutes({
        provider,
        settings,
        consents,
        authenticate: deps.authenticate,
        findAccount: deps.findAccount,
        register: deps.register,
        limits: { signIn: limits.signIn, register: limits.register },
      }),
    );
    app.use(router);
  }

  return {
    settings,
    accessTokens,
    mount,
    mountApi: (app) => app.use(connectedAppsRoutes(consents, deps.accountOf)),
    revokeAccount: (agentId) => consents.revokeAll(agentId),
  };
}
