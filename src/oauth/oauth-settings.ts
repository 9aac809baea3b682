/**
 * What the authorization server needs to know, from Config (src/config.ts): where it is, which resource its
 * tokens are for, how long they live, and the one setting tests use to fetch client metadata documents from
 * loopback (which Config refuses unless the service's own public URL is a loopback one).
 */

/** Read-only access: retrieve, search, list, history, export, account, live data. */
export const READ_SCOPE = 'read';
/** Changes to memories: store, delete, restore, import (a token with it also has `read`). */
export const WRITE_SCOPE = 'write';
export const RESOURCE_SCOPES = [READ_SCOPE, WRITE_SCOPE] as const;

export interface OAuthSettings {
  /** The issuer: the service's public URL (AC_PUBLIC_URL), without a trailing slash. */
  issuer: string;
  /** The protected resource, the canonical URL of the MCP endpoint: `${issuer}/mcp`. */
  resource: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /**
   * Tests only: fetch client metadata documents from loopback addresses and accept their self-signed
   * certificates. Config refuses it unless the issuer itself is on loopback.
   */
  cimdAllowLoopback: boolean;
}

/** The URL of the protected resource metadata for `/mcp` (RFC 9728, path-aware). */
export function resourceMetadataUrl(settings: Pick<OAuthSettings, 'issuer'>): string {
  return `${settings.issuer}/.well-known/oauth-protected-resource/mcp`;
}
