/**
 * The resource server's check of an OAuth access token at /mcp: the token must be one this server issued
 * (found in the store, so a revoked one is gone on every instance), unexpired, and issued for this resource
 * (its audience is the MCP endpoint's URL: a token for any other resource is refused, RFC 8707), and its
 * grant not revoked. What it grants is the account that signed in, the client it was issued to and the
 * scopes the person allowed.
 */
import type Provider from 'oidc-provider';
import type { Consents } from './consents.js';
import type { OAuthSettings } from './oauth-settings.js';

export interface TokenGrant {
  agentId: string;
  clientId: string;
  scopes: string[];
  /** Epoch seconds. */
  expiresAt: number;
}

export interface AccessTokens {
  /** What the token grants, or undefined when it is unknown, expired, revoked or for another resource. */
  verify(token: string): Promise<TokenGrant | undefined>;
}

export function createAccessTokens(
  provider: Provider,
  settings: Pick<OAuthSettings, 'resource'>,
  consents: Consents,
  onError: (err: unknown) => void,
): AccessTokens {
  return {
    async verify(token) {
      // Tokens are 43 url-safe characters; anything else is not one (and costs no lookup).
      if (!/^[\w-]{20,200}$/u.test(token)) return undefined;
      const found = await provider.AccessToken.find(token);
      if (!found || found.isExpired || !found.accountId || !found.clientId) return undefined;
      const audiences = Array.isArray(found.aud) ? found.aud : [found.aud];
      if (!audiences.includes(settings.resource)) return undefined;
      // Its grant must still be there: a token saved by an exchange that raced a revocation of the grant (the
      // console's, or a refresh token's reuse) outlives the revocation's sweep of the grant's tokens, not the
      // grant.
      if (!found.grantId || !(await provider.Grant.find(found.grantId))) return undefined;
      consents.touch(found.accountId, found.clientId).catch(onError);
      return {
        agentId: found.accountId,
        clientId: found.clientId,
        scopes: (found.scope ?? '').split(' ').filter(Boolean),
        expiresAt: found.exp ?? 0,
      };
    },
  };
}
