/**
 * Hostile requests to the authorization server and to /mcp's token check, each answered with the RFC's error
 * and changing nothing: a wrong PKCE verifier, a code used twice, a redirect URI one character off, a token
 * for another resource or from another server, an expired token, client metadata documents that resolve to
 * loopback (production rules), redirect, name another client, weigh 5 MB or never finish; a registration
 * asking for a client secret; garbage at the token endpoint, the pages and /mcp. Nothing leaks into the log.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorizeUrl,
  authorizeWithKey,
  browse,
  CookieJar,
  pageOf,
  pkce,
  registerClient,
  tokenRequest,
} from '../helpers/oauth-http.js';
import {
  freshStore,
  logProblems,
  type OAuthServer,
  rawToolCall,
  type StoreOf,
  startOAuthServer,
} from './oauth-harness.js';

const FIXTURES = path.resolve('test', 'fixtures', 'oauth');
const CALLBACK = 'http://127.0.0.1:53999/callback';

/** An https host on loopback whose answer per path the test decides. */
async function hostileHost(
  handler: (path: string, res: import('node:http').ServerResponse) => void,
): Promise<{ base: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0;
  const server = https.createServer(
    {
      key: readFileSync(path.join(FIXTURES, 'loopback-key.pem')),
      cert: readFileSync(path.join(FIXTURES, 'loopback-cert.pem')),
    },
    (req, res) => {
      hits++;
      handler(req.url ?? '/', res);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    hits: () => hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function documentFor(clientId: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    client_id: clientId,
    client_name: 'Hostile Client',
    redirect_uris: [CALLBACK],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...overrides,
  });
}

/** The authorization request for a CIMD client: a page (never a redirect to the client) with the error. */
async function authorizeCimd(server: OAuthServer, clientId: string) {
  const url = authorizeUrl({ issuer: server.issuer, clientId, redirectUri: CALLBACK }, pkce().challenge);
  return browse(new CookieJar(), url, CALLBACK);
}

describe('hostile requests to the authorization server', () => {
  let store: StoreOf;
  let server: OAuthServer;
  let key: string;
  let clientId: string;
  const secrets: string[] = [];

  beforeAll(async () => {
    store = await freshStore();
    server = await startOAuthServer({ store, env: { AC_OAUTH_ACCESS_TOKEN_TTL: '2s' } });
    key = await server.register();
    secrets.push(key);
    clientId = await registerClient(server.issuer, [CALLBACK], 'Hostile Tests');
  });

  afterAll(async () => {
    await server?.stop();
    await store?.remove();
  });

  /** An authorization code for a fresh PKCE pair, through the sign-in and consent pages. */
  async function code(scope = 'read write') {
    const { callback, verifier } = await authorizeWithKey(
      { issuer: server.issuer, clientId, redirectUri: CALLBACK, scope, state: 'hostile-state' },
      key,
    );
    const value = callback.searchParams.get('code') as string;
    secrets.push(value);
    return { code: value, verifier, callback };
  }

  function exchange(value: string, verifier: string, redirectUri = CALLBACK) {
    return tokenRequest(server.issuer, {
      grant_type: 'authorization_code',
      code: value,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      client_id: clientId,
      resource: `${server.issuer}/mcp`,
    });
  }

  it('the authorization response carries the state unchanged and iss, the issuer (RFC 9207)', async () => {
    const { callback } = await code();
    expect(callback.searchParams.get('state')).toBe('hostile-state');
    expect(callback.searchParams.get('iss')).toBe(server.issuer);
  });

  it('a wrong code_verifier is invalid_grant and issues nothing; the right one still works once', async () => {
    const { code: value, verifier } = await code();
    const wrong = await exchange(value, `${verifier.slice(0, -1)}${verifier.endsWith('A') ? 'B' : 'A'}`);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('invalid_grant');
    expect(wrong.body.access_token).toBeUndefined();
    const right = await exchange(value, verifier);
    expect(right.status, JSON.stringify(right.body)).toBe(200);
    secrets.push(String(right.body.access_token), String(right.body.refresh_token));
  });

  it('a code used twice is invalid_grant, and the tokens the first use got are revoked (RFC 6749 §4.1.2)', async () => {
    const { code: value, verifier } = await code();
    const first = await exchange(value, verifier);
    expect(first.status).toBe(200);
    const access = String(first.body.access_token);
    secrets.push(access, String(first.body.refresh_token));
    expect((await rawToolCall(server, access, 'account_info', {})).status).toBe(200);
    const second = await exchange(value, verifier);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    const after = await rawToolCall(server, access, 'account_info', {});
    expect(after.status).toBe(401);
    expect(after.challenge).toMatch(/error="invalid_token"/);
  });

  it('a redirect URI one character off: no redirect at all at /authorize, invalid_grant at /token', async () => {
    const url = authorizeUrl(
      { issuer: server.issuer, clientId, redirectUri: `${CALLBACK}x` },
      pkce().challenge,
    );
    const res = await fetch(url, { redirect: 'manual' });
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(res.headers.get('location')).toBeNull();
    expect(text).toContain('redirect_uri');
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);

    const { code: value, verifier } = await code();
    const mismatch = await exchange(value, verifier, `${CALLBACK}/`);
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toBe('invalid_grant');
  });

  it('another resource is invalid_target; a token from another server, or a refresh token, is 401 at /mcp', async () => {
    const jar = new CookieJar();
    const other = await browse(
      jar,
      authorizeUrl(
        { issuer: server.issuer, clientId, redirectUri: CALLBACK, resource: 'https://other.example.com/mcp' },
        pkce().challenge,
      ),
      CALLBACK,
    );
    expect('callback' in other && other.callback.searchParams.get('error')).toBe('invalid_target');

    const elsewhereStore = await freshStore();
    const elsewhere = await startOAuthServer({ store: elsewhereStore });
    try {
      const otherKey = await elsewhere.register();
      const otherClient = await registerClient(elsewhere.issuer, [CALLBACK]);
      const { callback, verifier } = await authorizeWithKey(
        { issuer: elsewhere.issuer, clientId: otherClient, redirectUri: CALLBACK },
        otherKey,
      );
      const tokens = await tokenRequest(elsewhere.issuer, {
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') as string,
        code_verifier: verifier,
        redirect_uri: CALLBACK,
        client_id: otherClient,
        resource: `${elsewhere.issuer}/mcp`,
      });
      expect(tokens.status).toBe(200);
      const foreign = String(tokens.body.access_token);
      expect((await rawToolCall(elsewhere, foreign, 'account_info', {})).status).toBe(200);
      const here = await rawToolCall(server, foreign, 'account_info', {});
      expect(here.status).toBe(401);
      expect(here.challenge).toMatch(
        /^Bearer resource_metadata=".*\/\.well-known\/oauth-protected-resource\/mcp"/,
      );
      expect(here.challenge).toMatch(/error="invalid_token"/);
      const refresh = await rawToolCall(elsewhere, String(tokens.body.refresh_token), 'account_info', {});
      expect(refresh.status).toBe(401);
    } finally {
      await elsewhere.stop();
      await elsewhereStore.remove();
    }
  });

  it('an expired access token is 401 with invalid_token', async () => {
    const { code: value, verifier } = await code();
    const tokens = await exchange(value, verifier);
    const access = String(tokens.body.access_token);
    secrets.push(access, String(tokens.body.refresh_token));
    expect(tokens.body.expires_in).toBeLessThanOrEqual(2);
    expect((await rawToolCall(server, access, 'account_info', {})).status).toBe(200);
    let status = 200;
    for (let i = 0; i < 40 && status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await rawToolCall(server, access, 'account_info', {})).status;
    }
    expect(status).toBe(401);
  });

  it('a registration asking for a client secret is invalid_client_metadata, and makes no client', async () => {
    const res = await server.request('POST', '/oauth/register', {
      body: {
        redirect_uris: [CALLBACK],
        token_endpoint_auth_method: 'client_secret_basic',
        client_name: 'Secretive',
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_client_metadata');
    expect(res.body.client_id).toBeUndefined();
  });

  it('garbage at the token endpoint, the registration endpoint, the pages and /mcp: 4xx answers, nothing falls over', async () => {
    const bodies = [
      '',
      'grant_type=authorization_code',
      'grant_type=refresh_token&refresh_token=%00%00',
      `grant_type=${'x'.repeat(10_000)}`,
      'code=%E0%A4%A&grant_type=authorization_code',
      '\u0000\u0001\u0002',
    ];
    for (const body of bodies) {
      const res = await fetch(new URL('/oauth/token', server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect(res.status, body).toBeGreaterThanOrEqual(400);
      expect(res.status, body).toBeLessThan(500);
      expect(((await res.json()) as { error?: string }).error).toBeTypeOf('string');
    }
    for (const body of ['{', '[]', '{"redirect_uris":"x"}', `{"redirect_uris":["${'a'.repeat(70_000)}"]}`]) {
      const res = await fetch(new URL('/oauth/register', server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(res.status, body.slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(res.status, body.slice(0, 40)).toBeLessThan(500);
    }
    for (const pathname of [
      '/oauth/interaction/nope',
      '/oauth/interaction/%00',
      '/oauth/interaction/x/sign-in',
    ]) {
      const res = await fetch(new URL(pathname, server.url), {
        method: pathname.endsWith('sign-in') ? 'POST' : 'GET',
        ...(pathname.endsWith('sign-in')
          ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'api_key=ac_x' }
          : {}),
      });
      expect(res.status, pathname).toBeGreaterThanOrEqual(400);
      expect(res.status, pathname).toBeLessThan(500);
    }
    for (const bearer of [
      'x',
      'ac_nope',
      'a'.repeat(5000),
      'ünïcode',
      '../../etc/passwd',
      'eyJhbGciOiJub25lIn0.e30.',
    ]) {
      const res = await rawToolCall(server, bearer, 'account_info', {});
      expect(res.status, bearer.slice(0, 20)).toBe(401);
      expect(res.challenge).toMatch(/^Bearer /);
    }
    expect((await server.request('GET', '/api/ac/ping')).status).toBe(200);
  });

  it('no credential, code or key in the log, and no stack trace or 5xx', () => {
    const log = server.log();
    for (const secret of secrets)
      expect(log.includes(secret), `the log shows ${secret.slice(0, 8)}…`).toBe(false);
    expect(logProblems(log)).toEqual([]);
  });
});

describe('hostile client metadata documents', () => {
  let store: StoreOf;

  beforeAll(async () => {
    store = await freshStore();
  });
  afterAll(async () => {
    await store?.remove();
  });

  it('production rules: a document on a loopback address (by IP or by a name that resolves to it) is never fetched', async () => {
    const host = await hostileHost((_path, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    const server = await startOAuthServer({ store, env: { AC_OAUTH_CIMD_ALLOW_LOOPBACK: 'off' } });
    try {
      for (const base of [host.base, host.base.replace('127.0.0.1', 'localhost')]) {
        const id = `${base}/client.json`;
        const answer = pageOf(await authorizeCimd(server, id));
        expect(answer.status, id).toBe(400);
        expect(answer.text).toContain('invalid_client');
      }
      expect(host.hits()).toBe(0);
      expect(logProblems(server.log())).toEqual([]);
    } finally {
      await server.stop();
      await host.close();
    }
  });

  it('with loopback allowed (tests): a redirect, another client_id, 5 MB, or a document that never ends are refused', async () => {
    const host = await hostileHost((pathname, res) => {
      const id = `https://127.0.0.1:${port}${pathname}`;
      if (pathname === '/redirect.json') {
        res.writeHead(302, { location: '/good.json' }).end();
      } else if (pathname === '/good.json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(documentFor(id));
      } else if (pathname === '/other-id.json') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(documentFor('https://evil.example.com/c.json'));
      } else if (pathname === '/huge.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(documentFor(id, { padding: 'x'.repeat(5 * 1024 * 1024) }));
      } else if (pathname === '/slow.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"client_id":');
        // never ends: the server must give up on its own
      } else {
        res.writeHead(404).end();
      }
    });
    const port = Number(new URL(host.base).port);
    const server = await startOAuthServer({ store });
    try {
      const good = pageOf(await authorizeCimd(server, `${host.base}/good.json`));
      expect(good.status, good.text).toBe(200);
      expect(good.text).toContain('Hostile Client');
      for (const name of ['redirect', 'other-id', 'huge', 'slow']) {
        const started = Date.now();
        const answer = pageOf(await authorizeCimd(server, `${host.base}/${name}.json`));
        expect(answer.status, name).toBe(400);
        expect(answer.text, name).toMatch(/invalid_client/);
        expect(Date.now() - started, name).toBeLessThan(10_000);
      }
      expect(logProblems(server.log())).toEqual([]);
    } finally {
      await server.stop();
      await host.close();
    }
  });
});
