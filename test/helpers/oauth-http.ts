/**
 * The OAuth authorization flow over plain HTTP, as a client and a person would go through it without a
 * browser: a free port for a server whose issuer must be known before it starts, a small cookie jar, a
 * `browse` that follows the server's redirects until a page or the client's callback, dynamic registration,
 * an authorization request with PKCE, the sign-in and consent forms, and the token endpoint.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';

/** A free loopback port, for a server whose public URL (the OAuth issuer) must be known before it starts. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('freePort: no port');
  return address.port;
}

/** A browser's cookies for one origin, enough for oidc-provider's interaction and session cookies. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = attributes.some((a) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export interface BrowsedPage {
  url: string;
  status: number;
  text: string;
}

/**
 * Requests `url` and follows the server's redirects as a browser does, until a page (returned with its URL)
 * or a redirect whose target starts with `callbackPrefix` (returned as `callback`).
 */
export async function browse(
  jar: CookieJar,
  url: string,
  callbackPrefix: string,
  form?: Record<string, string>,
): Promise<BrowsedPage | { callback: URL }> {
  let next = new URL(url);
  let body: URLSearchParams | undefined = form ? new URLSearchParams(form) : undefined;
  for (let hops = 0; hops < 10; hops++) {
    const res = await fetch(next, {
      method: body ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: jar.header(),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(body ? { body } : {}),
    });
    jar.take(res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      await res.arrayBuffer();
      const target = new URL(location, next);
      if (target.href.startsWith(callbackPrefix)) return { callback: target };
      next = target;
      body = undefined;
      continue;
    }
    return { url: next.href, status: res.status, text: await res.text() };
  }
  throw new Error(`browse: too many redirects from ${url}`);
}

export function pageOf(result: BrowsedPage | { callback: URL }): BrowsedPage {
  if ('callback' in result) throw new Error(`expected a page, was sent to ${result.callback.href}`);
  return result;
}

export function callbackOf(result: BrowsedPage | { callback: URL }): URL {
  if (!('callback' in result))
    throw new Error(`expected the callback, got ${result.status} at ${result.url}`);
  return result.callback;
}

/** The interaction id in a page's URL (/oauth/interaction/<uid>). */
export function interactionOf(page: BrowsedPage): string {
  const uid = /\/oauth\/interaction\/([^/?#]+)/.exec(page.url)?.[1];
  if (!uid) throw new Error(`not an interaction page: ${page.url}`);
  return uid;
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Registers a public native client (RFC 7591) with these redirect URIs; its client_id. */
export async function registerClient(
  issuer: string,
  redirectUris: string[],
  name = 'Test App',
): Promise<string> {
  const res = await fetch(new URL('/oauth/register', issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: redirectUris,
      token_endpoint_auth_method: 'none',
      client_name: name,
      application_type: 'native',
    }),
  });
  const body = (await res.json()) as { client_id?: string };
  if (res.status !== 201 || !body.client_id) throw new Error(`registration failed: ${JSON.stringify(body)}`);
  return body.client_id;
}

export interface AuthorizeRequest {
  issuer: string;
  clientId: string;
  redirectUri: string;
  scope?: string;
  resource?: string;
  state?: string;
  pkce?: Pkce;
}

/** The authorization request's URL (PKCE S256). */
export function authorizeUrl(request: AuthorizeRequest, challenge: string): string {
  const url = new URL('/oauth/authorize', request.issuer);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    scope: request.scope ?? 'read write',
    resource: request.resource ?? `${request.issuer}/mcp`,
    state: request.state ?? 'state-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }))
    url.searchParams.set(k, v);
  return url.href;
}

/**
 * The whole person's part: authorize, sign in with `key`, allow; the callback URL (code, state, iss) and the
 * PKCE verifier. `jar` keeps the browser's session between calls.
 */
export async function authorizeWithKey(
  request: AuthorizeRequest,
  key: string,
  jar = new CookieJar(),
): Promise<{ callback: URL; verifier: string }> {
  const codes = request.pkce ?? pkce();
  let result = await browse(jar, authorizeUrl(request, codes.challenge), request.redirectUri);
  if (!('callback' in result) && /name="api_key"/.test(result.text)) {
    result = await browse(
      jar,
      `${request.issuer}/oauth/interaction/${interactionOf(result)}/sign-in`,
      request.redirectUri,
      {
        api_key: key,
      },
    );
  }
  if (!('callback' in result) && /name="decision"/.test(result.text)) {
    result = await browse(
      jar,
      `${request.issuer}/oauth/interaction/${interactionOf(result)}/consent`,
      request.redirectUri,
      {
        decision: 'allow',
      },
    );
  }
  return { callback: callbackOf(result), verifier: codes.verifier };
}

/** POST /oauth/token with a form; status and JSON body. */
export async function tokenRequest(
  issuer: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(new URL('/oauth/token', issuer), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
