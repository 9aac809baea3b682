/** Where the authorization server's endpoints are, all under /oauth but for the well-known documents. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  introspection: '/oauth/introspect',
  end_session: '/oauth/logout',
  userinfo: '/oauth/userinfo',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
} as const;

/** The host names of this computer, as a URL's `hostname` gives them. */
export const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The sign-in and consent pages of one authorization request. */
export const INTERACTION_PATH = '/oauth/interaction';

/** oidc-provider's own discovery document (OpenID Connect Discovery). */
export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
/** The same metadata at the RFC 8414 path, which MCP clients ask first. */
export const AS_METADATA_PATH = '/.well-known/oauth-authorization-server';
/** RFC 9728 protected resource metadata: path-aware for /mcp, and at the root. */
export const RESOURCE_METADATA_PATHS = [
  '/.well-known/oauth-protected-resource/mcp',
  '/.well-known/oauth-protected-resource',
] as const;

/** Whether oidc-provider answers this path (the interaction pages are ours). */
export function isProviderPath(path: string): boolean {
  return (
    (path.startsWith('/oauth/') &&
      !path.startsWith(`${INTERACTION_PATH}/`) &&
      !path.startsWith('/oauth/assets/')) ||
    path === OPENID_CONFIGURATION_PATH
  );
}
