/**
 * How the authorization server fetches a client's metadata document (a `client_id` that is an https URL).
 * oidc-provider's own rules apply in production: https only, no redirects followed (anything but a 200 is a
 * refusal), a 2.5 s limit, a size limit (oauth-provider.ts), and a connection to a loopback, private or other
 * special-use address, found after resolution, is cut before a byte is sent (its SSRF dispatcher).
 *
 * Tests serve documents from loopback with a self-signed certificate, which those rules refuse. With
 * `allowLoopback` (AC_OAUTH_CIMD_ALLOW_LOOPBACK, which Config accepts only when the service's own public URL
 * is on loopback), documents are fetched from loopback hosts only, with any certificate, still without
 * following a redirect; every other host is refused.
 */
import { LOOPBACK_HOSTS } from './oauth-paths.js';

type Fetch = (url: string | URL | Request, options?: RequestInit) => Promise<Response>;

/** An undici Agent of the undici inside Node's fetch, which a dispatcher handed to fetch must be. */
function nodeUndiciAgent(options: object): unknown {
  const global = globalThis as Record<symbol, unknown>;
  const dispatcher =
    global[Symbol.for('undici.globalDispatcher.2')] ?? global[Symbol.for('undici.globalDispatcher.1')];
  const Agent = (dispatcher as { constructor?: new (options: object) => unknown } | undefined)?.constructor;
  if (!Agent) throw new Error("Node's fetch has no dispatcher to copy.");
  return new Agent(options);
}

export function cimdFetch(allowLoopback: boolean): Fetch {
  if (!allowLoopback) return (url, options) => fetch(url, options);
  let loopbackAgent: unknown;
  return async (url, options) => {
    if (!LOOPBACK_HOSTS.has(new URL(url instanceof Request ? url.url : url).hostname)) {
      throw new Error('Only loopback client metadata documents are fetched in this test setting.');
    }
    loopbackAgent ??= nodeUndiciAgent({ connect: { rejectUnauthorized: false } });
    return fetch(url, { ...options, dispatcher: loopbackAgent } as RequestInit);
  };
}
