/**
 * The authorization server: oidc-provider (panva/node-oidc-provider, OpenID Certified), configured for what
 * an MCP client expects of it (MCP authorization, 2025-11-25 and 2026-07-28): authorization code with PKCE
 * S256 only, public clients (`token_endpoint_auth_method: none`), Client ID Metadata Documents and dynamic
 * registration, resource indicators (RFC 8707) with one resource, the MCP endpoint, whose tokens are opaque
 * and audience-bound; `iss` in every authorization response (RFC 9207); rotating refresh tokens whose reuse
 * revokes the whole grant. The library does the protocol; this file only says our policy. Its storage is the
 * store's (oauth-adapter.ts), its sign-in and consent are ours (interaction-routes.ts).
 */
import Provider, { type Configuration, errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { Account } from '../core/model.js';
import type { OAuthRecords } from '../store/oauth-records.js';
import { cimdFetch } from './cimd-fetch.js';
import { oauthAdapterFor } from './oauth-adapter.js';
import { LOOPBACK_HOSTS, OAUTH_ROUTES } from './oauth-paths.js';
import { loadSecrets } from './oauth-secrets.js';
import { type OAuthSettings, RESOURCE_SCOPES } from './oauth-settings.js';
import { renderProviderError } from './pages/error-page.js';

export interface ProviderDeps {
  settings: OAuthSettings;
  records: OAuthRecords;
  /** The account with this id, if there is one. */
  findAccount(agentId: string): Promise<Account | undefined>;
  /** The grant this account already gave this client (remembered consent), if any. */
  rememberedGrant(accountId: string, clientId: string): Promise<string | undefined>;
  /** Told of every failure oidc-provider answers as server_error (a store fault, a bug): for the log. */
  onServerError(err: unknown): void;
  now?: () => number;
}

/** The header oauth-room.ts puts the client's address in (as Express found it, trust proxy applied). */
export const PEER_HEADER = 'x-agent-context-peer';

/** Whether a redirect URI goes to this computer: a loopback address or a scheme other than https/http. */
export function answersToThisComputer(redirectUri: string): boolean {
  const url = URL.parse(redirectUri);
  if (!url) return true;
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return true;
  return LOOPBACK_HOSTS.has(url.hostname);
}

/** How long a sign-in and consent may take, and how long an authorization code lives (seconds). */
const INTERACTION_TTL = 10 * 60;
const CODE_TTL = 60;
/** How long a consent's grant lives, at least (seconds). */
const GRANT_TTL = 365 * 24 * 3600;

export async function createProvider(deps: ProviderDeps): Promise<Provider> {
  const { settings, records } = deps;
  const now = deps.now ?? Date.now;
  const secrets = await loadSecrets(records);
  const configuration: Configuration = {
    adapter: oauthAdapterFor(records, now),
    clients: [],
    async findAccount(_ctx, sub) {
      const account = await deps.findAccount(sub);
      return account && { accountId: account.id, claims: async () => ({ sub: account.id }) };
    },
    // No `offline_access`: a refresh token goes to every client registered for the refresh_token grant (the
    // pure OAuth 2.1 way, issueRefreshToken below). Advertised, it makes MCP clients ask for it (SEP-2207),
    // and with it for prompt=consent, which shows the consent page on every sign-in, remembered or not.
    scopes: ['openid', ...RESOURCE_SCOPES],
    claims: { openid: ['sub'] },
    routes: OAUTH_ROUTES,
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['none'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      // The only signing key is ES256 (oauth-secrets.ts); oidc-provider's default (RS256) would refuse every
      // registration and every client metadata document that does not name an algorithm.
      id_token_signed_response_alg: 'ES256',
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: {
        enabled: true,
        // RFC 7009 2.1: only the client a token was issued to revokes it (another client's request is
        // answered 200 and changes nothing, as oidc-provider's default does for public clients).
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // /mcp takes Bearer tokens only: a DPoP-bound token would be refused there (or, sent as a Bearer,
      // accepted without its proof), so none is issued and none is advertised.
      dPoP: { enabled: false },
      // Nothing MCP needs, and an endpoint that stores a record per call without the authorize limits.
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => settings.resource,
        useGrantedResource: async () => true,
        async getResourceServerInfo(_ctx, indicator) {
          if (indicator !== settings.resource)
            throw new errors.InvalidTarget(`The only resource here is ${settings.resource}.`);
          return {
            scope: RESOURCE_SCOPES.join(' '),
            audience: settings.resource,
            accessTokenTTL: settings.accessTokenTtlSeconds,
            accessTokenFormat: 'opaque',
          };
        },
      },
      // draft-02 of the Client ID Metadata Document (the revision MCP 2025-11-25 and 2026-07-28 cite).
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02', cacheDuration: { min: 60, max: 3600 } },
    } as Configuration['features'],
    fetch: cimdFetch(settings.cimdAllowLoopback),
    fetchResponseBodyLimits: { 'client_id metadata document': 16 * 1024 },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const accountId = ctx.oidc.session?.accountId;
      const clientId = ctx.oidc.client?.clientId;
      // A remembered consent is not used for an answer that goes to this computer (a loopback or custom-scheme
      // redirect): any program here could present the client's id and catch it, so the person is asked again.
      const remembered =
        accountId && clientId && !answersToThisComputer(String(ctx.oidc.params?.redirect_uri ?? ''))
          ? await deps.rememberedGrant(accountId, clientId)
          : undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? remembered;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    ttl: {
      AccessToken: settings.accessTokenTtlSeconds,
      AuthorizationCode: CODE_TTL,
      RefreshToken: settings.refreshTokenTtlSeconds,
      // A grant outlives its refresh tokens, each of which lives its own TTL from its rotation: a connector in
      // use stays connected for a year, then the person allows it again.
      Grant: Math.max(settings.refreshTokenTtlSeconds, GRANT_TTL),
      Interaction: INTERACTION_TTL,
      Session: INTERACTION_TTL,
      IdToken: settings.accessTokenTtlSeconds,
      ClientCredentials: settings.accessTokenTtlSeconds,
      DeviceCode: INTERACTION_TTL,
      BackchannelAuthenticationRequest: INTERACTION_TTL,
    },
    cookies: {
      keys: secrets.cookieKeys,
      long: { httpOnly: true, sameSite: 'lax', signed: true },
      short: { httpOnly: true, sameSite: 'lax', signed: true },
    },
    jwks: { keys: secrets.signingKeys },
    // Public clients (PKCE) may call the token endpoint from a browser.
    clientBasedCORS: () => true,
    renderError: renderProviderError,
  };
  const provider = new Provider(settings.issuer, configuration);
  // oidc-provider reports an unexpected failure only as an event: without this it would be a silent 500.
  provider.on('server_error', (_ctx: unknown, err: unknown) => deps.onServerError(err));
  // Every request reaches it as if at the issuer (oauth-room.ts sets the forwarded scheme, host and address
  // from the issuer and from Express's view of the client): its endpoint URLs and cookies follow the issuer,
  // not whatever Host a request or a proxy sent.
  provider.proxy = true;
  provider.proxyIpHeader = PEER_HEADER;
  return provider;
}
