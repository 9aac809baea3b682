/**
 * OAuth 2.1 for remote MCP clients, end to end, on the run's store (AC_TEST_STORE): the real server with its
 * public URL on loopback, the MCP SDK's OAuth client driven as a connector drives it (discovery from the 401,
 * a Client ID Metadata Document served over https, PKCE, the token exchange, refresh), and a person in
 * Chromium who signs in with the account's API key and answers the consent page. Then what the tokens do
 * (tools, the ledger's `client`), what they stop doing (rotation, reuse, a race for one refresh token,
 * revocation from the console and at /oauth/revoke), consent asked again for a loopback answer, a native client that registers
 * dynamically instead (asked every time, any loopback port), a read-only token (403 insufficient_scope, in a
 * batch too), a Deny, Claude's redirect URI, and the SDK refreshing an expired access token by itself.
 */
import {
  auth,
  Client,
  InsufficientScopeError,
  type OAuthClientMetadata,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICES } from '../../src/core/pricing.js';
import { launchBrowser } from '../helpers/browser.js';
import {
  type Callback,
  type CimdHost,
  freshStore,
  logProblems,
  MemoryOAuthClient,
  type OAuthServer,
  personAuthorizes,
  rawToolCall,
  refreshAt,
  type StoreOf,
  startCallback,
  startCimdHost,
  startOAuthServer,
} from './oauth-harness.js';

const CLIENT_NAME = 'Claude (test connector)';
const NATIVE_NAME = 'Desktop agent (test)';
const FLOW_TIMEOUT = 90_000;

let store: StoreOf;
let server: OAuthServer;
let callback: Callback;
let cimd: CimdHost;
let browser: Browser;
let person: BrowserContext;
const email = `oauth-person-${process.pid}@example.com`;
let key: string;
/** Servers a test started for itself, closed with the rest. */
const closeAfter: { close(): Promise<void> }[] = [];

function metadataFor(redirectUri: string, extra: Partial<OAuthClientMetadata> = {}): OAuthClientMetadata {
  return {
    client_name: CLIENT_NAME,
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  };
}

beforeAll(async () => {
  store = await freshStore();
  [server, callback, browser] = await Promise.all([
    startOAuthServer({ store }),
    startCallback(),
    launchBrowser(),
  ]);
  cimd = await startCimdHost((clientId) => ({ client_id: clientId, ...metadataFor(callback.redirectUri) }));
  person = await browser.newContext();
  key = await server.register(email);
}, 60_000);

afterAll(async () => {
  await person?.close();
  await browser?.close();
  await Promise.all([server?.stop(), callback?.close(), cimd?.close(), ...closeAfter.map((c) => c.close())]);
  await store?.remove();
});

const balance = async () =>
  (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;

const transactions = async () =>
  (await server.request('GET', '/api/ac/account/transactions', { key, query: { limit: '20' } })).body
    .transactions as { operation: string; amount_cents: number; client?: string }[];

/** An MCP client of the SDK on /mcp, signed in by `provider`'s tokens. */
async function connected(provider: MemoryOAuthClient, target = server): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(target.mcpUrl, { authProvider: provider }));
  return client;
}

/** memory_retrieve's value of `memoryKey` through `client`. */
async function retrieve(client: Client, memoryKey: string): Promise<unknown> {
  const result = await client.callTool({ name: 'memory_retrieve', arguments: { memory_key: memoryKey } });
  expect(result.isError, JSON.stringify(result)).not.toBe(true);
  return (result.structuredContent as { memory: { memory_value: unknown } }).memory.memory_value;
}

describe('a connector with a client metadata document', () => {
  const connector = () =>
    new MemoryOAuthClient({
      redirectUri: callback.redirectUri,
      clientMetadataUrl: cimd.clientId,
      metadata: metadataFor(callback.redirectUri),
    });
  let provider: MemoryOAuthClient;

  it(
    'finds the server from the 401, is allowed by the person, and calls tools charged to the account',
    async () => {
      provider = connector();
      // The first request has no token: 401, whose challenge leads the SDK to the metadata, then to the
      // authorization URL it would open in the person's browser.
      const first = new StreamableHTTPClientTransport(server.mcpUrl, { authProvider: provider });
      await expect(new Client({ name: 'oauth-test', version: '1.0.0' }).connect(first)).rejects.toThrow(
        UnauthorizedError,
      );
      const authorizationUrl = provider.authorizationUrl as URL;
      expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${server.issuer}/oauth/authorize`);
      const asked = Object.fromEntries(authorizationUrl.searchParams);
      expect(asked).toMatchObject({
        response_type: 'code',
        client_id: cimd.clientId,
        redirect_uri: callback.redirectUri,
        code_challenge_method: 'S256',
        resource: `${server.issuer}/mcp`,
        state: provider.lastState,
      });
      expect(asked.code_challenge).toMatch(/^[\w-]{43}$/u);
      expect(asked.scope?.split(' ')).toEqual(expect.arrayContaining(['read', 'write']));
      expect(provider.clientId).toBe(cimd.clientId); // no registration: the document's URL is the id

      const { params, consentText, problems } = await personAuthorizes(person, authorizationUrl, callback, {
        apiKey: key,
        expect: ['sign-in', 'consent'],
        screenshots: 'oauth-flow',
      });
      expect(problems).toEqual([]);
      expect(cimd.fetches()).toBeGreaterThanOrEqual(1); // the server read the document
      expect(consentText).toContain(CLIENT_NAME);
      expect(consentText).toContain(email);
      expect(consentText).toContain(new URL(callback.redirectUri).host);
      expect(consentText).toContain(cimd.clientId);
      expect(consentText).toMatch(/Read/u);
      expect(consentText).toMatch(/Write/u);
      // The authorization response (RFC 9207: iss, the issuer), back at the loopback redirect URI.
      expect(params.get('code')).toMatch(/^[\w-]{20,}$/u);
      expect(params.get('state')).toBe(provider.lastState);
      expect(params.get('iss')).toBe(server.issuer);
      expect(params.get('error')).toBeNull();

      await first.finishAuth(params);
      const tokens = provider.tokenSet;
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.access_token).toMatch(/^[\w-]{43}$/u);
      expect(tokens.refresh_token).toMatch(/^[\w-]{43}$/u);
      expect(tokens.scope?.split(' ').sort()).toEqual(['read', 'write']);

      const before = await balance();
      const client = await connected(provider);
      const stored = await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'oauth-note', memory_value: 'stored through a connector' },
      });
      expect(stored.isError, JSON.stringify(stored)).not.toBe(true);
      expect(await retrieve(client, 'oauth-note')).toBe('stored through a connector');
      await client.close();

      // The account paid exactly the two prices, and its ledger names the client that spent them.
      expect(await balance()).toBe(before - 2 * PRICES.memoryOp);
      const [retrieved, wrote] = await transactions();
      expect(retrieved).toMatchObject({
        operation: 'memory_retrieve',
        amount_cents: -PRICES.memoryOp,
        client: cimd.clientId,
      });
      expect(wrote).toMatchObject({
        operation: 'memory_store',
        amount_cents: -PRICES.memoryOp,
        client: cimd.clientId,
      });
      // What the API key does itself carries no client.
      await server.request('GET', '/api/ac/memory', {
        key,
        query: { agent_key: key, memory_key: 'oauth-note' },
      });
      expect((await transactions())[0]).not.toHaveProperty('client');
    },
    FLOW_TIMEOUT,
  );

  it('is listed in the console with what it may do and when it was last used', async () => {
    const listed = await server.request('GET', '/api/ac/oauth/clients', { key });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.clients).toEqual([
      {
        client_id: cimd.clientId,
        client_name: CLIENT_NAME,
        client_host: new URL(callback.redirectUri).host,
        scopes: ['read', 'write'],
        allowed_at: expect.any(String),
        last_used_at: expect.any(String),
      },
    ]);
    expect((await server.request('GET', '/api/ac/oauth/clients')).status).toBe(401);
    // An access token is for /mcp only: the console's list and revocation want the account's key.
    const bearer = provider.tokenSet.access_token;
    expect((await server.request('GET', '/api/ac/oauth/clients', { bearer })).status).toBe(401);
    const notRevoked = await server.request('DELETE', '/api/ac/oauth/clients', {
      bearer,
      query: { client_id: cimd.clientId },
    });
    expect(notRevoked.status).toBe(401);
  });

  it('refreshes its tokens: a rotated refresh token is refused, and its reuse revokes the family', async () => {
    const start = provider.tokenSet;
    const refreshed = await refreshAt(server, cimd.clientId, start.refresh_token as string);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.refresh_token).toMatch(/^[\w-]{43}$/u);
    expect(refreshed.body.refresh_token).not.toBe(start.refresh_token); // rotated
    expect(refreshed.body.access_token).not.toBe(start.access_token);
    expect(refreshed.body.scope.split(' ').sort()).toEqual(['read', 'write']);
    expect(
      (
        await rawToolCall(server, refreshed.body.access_token, 'memory_retrieve', {
          memory_key: 'oauth-note',
        })
      ).status,
    ).toBe(200);

    // A second refresh with the new one works: the family goes on.
    const again = await refreshAt(server, cimd.clientId, refreshed.body.refresh_token);
    expect(again.status, JSON.stringify(again.body)).toBe(200);

    // The first refresh token, used already, is refused, and its reuse revokes everything of the grant:
    // the newest refresh token and access token stop working too.
    const reused = await refreshAt(server, cimd.clientId, start.refresh_token as string);
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const latest = await rawToolCall(server, again.body.access_token, 'memory_retrieve', {
      memory_key: 'oauth-note',
    });
    expect(latest.status).toBe(401);
    expect(latest.challenge).toMatch(/^Bearer .*error="invalid_token"/u);
    expect(await refreshAt(server, cimd.clientId, again.body.refresh_token)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    // The console no longer lists it: what it was allowed is gone with the grant.
    expect((await server.request('GET', '/api/ac/oauth/clients', { key })).body.clients).toEqual([]);
  });

  it(
    'signs in again and, its answer going to this computer, is asked again (one grant all the same), and is cut off when the console revokes it',
    async () => {
      provider = connector();
      await expect(connected(provider)).rejects.toThrow(UnauthorizedError);
      // The browser still has its session: but the grant was revoked, so the person is asked again.
      let answer = await personAuthorizes(person, provider.authorizationUrl as URL, callback, {
        apiKey: key,
        expect: ['consent'],
      });
      await new StreamableHTTPClientTransport(server.mcpUrl, { authProvider: provider }).finishAuth(
        answer.params,
      );

      // A new browser (no session): sign-in, and the consent again, since the answer goes to a loopback
      // address (any program here could present this client's id); the person allows the same grant.
      const fresh = await browser.newContext();
      try {
        const other = connector();
        await expect(connected(other)).rejects.toThrow(UnauthorizedError);
        answer = await personAuthorizes(fresh, other.authorizationUrl as URL, callback, {
          apiKey: key,
          expect: ['sign-in', 'consent'],
        });
        expect(answer.problems).toEqual([]);
        expect(answer.params.get('iss')).toBe(server.issuer);
        await new StreamableHTTPClientTransport(server.mcpUrl, { authProvider: other }).finishAuth(
          answer.params,
        );
        const client = await connected(other);
        expect(await retrieve(client, 'oauth-note')).toBe('stored through a connector');
        await client.close();
        expect((await server.request('GET', '/api/ac/oauth/clients', { key })).body.clients).toHaveLength(1);
      } finally {
        await fresh.close();
      }

      // The console revokes the client: its tokens are refused at once.
      const token = provider.tokenSet.access_token;
      expect((await rawToolCall(server, token, 'memory_retrieve', { memory_key: 'oauth-note' })).status).toBe(
        200,
      );
      const revoked = await server.request('DELETE', '/api/ac/oauth/clients', {
        key,
        query: { client_id: cimd.clientId },
      });
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body).toEqual({ revoked: true, client_id: cimd.clientId });
      const refused = await rawToolCall(server, token, 'memory_retrieve', { memory_key: 'oauth-note' });
      expect(refused.status).toBe(401);
      expect(refused.challenge).toContain(
        `resource_metadata="${server.issuer}/.well-known/oauth-protected-resource/mcp"`,
      );
      expect(await refreshAt(server, cimd.clientId, provider.tokenSet.refresh_token as string)).toMatchObject(
        {
          status: 400,
          body: { error: 'invalid_grant' },
        },
      );
      expect((await server.request('GET', '/api/ac/oauth/clients', { key })).body.clients).toEqual([]);
      const again = await server.request('DELETE', '/api/ac/oauth/clients', {
        key,
        query: { client_id: cimd.clientId },
      });
      expect(again.status).toBe(404);
    },
    FLOW_TIMEOUT,
  );

  it(
    'refuses a refresh token that two exchanges race for: one wins, and the family is revoked',
    async () => {
      provider = connector();
      await expect(connected(provider)).rejects.toThrow(UnauthorizedError);
      const answer = await personAuthorizes(person, provider.authorizationUrl as URL, callback, {
        apiKey: key,
        expect: ['consent'],
      });
      await new StreamableHTTPClientTransport(server.mcpUrl, { authProvider: provider }).finishAuth(
        answer.params,
      );
      const refreshToken = provider.tokenSet.refresh_token as string;
      const raced = await Promise.all([
        refreshAt(server, cimd.clientId, refreshToken),
        refreshAt(server, cimd.clientId, refreshToken),
      ]);
      expect(raced.map((r) => r.status).sort()).toEqual([200, 400]);
      const loser = raced.find((r) => r.status === 400);
      expect(loser?.body.error).toBe('invalid_grant');
      const winner = raced.find((r) => r.status === 200)?.body as Record<string, string>;
      expect(
        (
          await rawToolCall(server, winner.access_token as string, 'memory_retrieve', {
            memory_key: 'oauth-note',
          })
        ).status,
      ).toBe(401);
      expect((await refreshAt(server, cimd.clientId, winner.refresh_token as string)).status).toBe(400);
    },
    FLOW_TIMEOUT,
  );
});

describe('a client that registers dynamically', () => {
  let native: MemoryOAuthClient;

  it(
    'registers as a native app with a loopback redirect and goes through the same flow',
    async () => {
      native = new MemoryOAuthClient({
        redirectUri: callback.redirectUri,
        metadata: metadataFor(callback.redirectUri, { client_name: NATIVE_NAME, application_type: 'native' }),
      });
      await expect(connected(native)).rejects.toThrow(UnauthorizedError);
      expect(native.clientId).not.toBe(cimd.clientId);
      expect(native.clientId).not.toMatch(/^https:/u);
      const fresh = await browser.newContext();
      try {
        const answer = await personAuthorizes(fresh, native.authorizationUrl as URL, callback, {
          apiKey: key,
          expect: ['sign-in', 'consent'],
          screenshots: 'oauth-flow-native',
        });
        expect(answer.problems).toEqual([]);
        expect(answer.consentText).toContain(NATIVE_NAME);
        expect(answer.consentText).toMatch(/a program on this computer/u);
        expect(answer.params.get('state')).toBe(native.lastState);
        expect(answer.params.get('iss')).toBe(server.issuer);
        await new StreamableHTTPClientTransport(server.mcpUrl, { authProvider: native }).finishAuth(
          answer.params,
        );
      } finally {
        await fresh.close();
      }
      const client = await connected(native);
      const stored = await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'native-note', memory_value: 'from a registered client' },
      });
      expect(stored.isError, JSON.stringify(stored)).not.toBe(true);
      await client.close();
      expect((await transactions())[0]).toMatchObject({ operation: 'memory_store', client: native.clientId });
      const listed = (await server.request('GET', '/api/ac/oauth/clients', { key })).body.clients;
      expect(listed).toContainEqual(
        expect.objectContaining({
          client_id: native.clientId,
          client_name: NATIVE_NAME,
          scopes: ['read', 'write'],
        }),
      );

      // RFC 7009: only the client a token was issued to revokes it; another client's request changes nothing.
      const revoke = (clientId: string) =>
        fetch(new URL('/oauth/revoke', server.url), {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token: native.tokenSet.access_token, client_id: clientId }),
        });
      const token = native.tokenSet.access_token;
      expect((await revoke(cimd.clientId)).status).toBe(200);
      expect(
        (await rawToolCall(server, token, 'memory_retrieve', { memory_key: 'native-note' })).status,
      ).toBe(200);
      expect((await revoke(native.clientId)).status).toBe(200);
      expect(
        (await rawToolCall(server, token, 'memory_retrieve', { memory_key: 'native-note' })).status,
      ).toBe(401);
    },
    FLOW_TIMEOUT,
  );

  it(
    'asks a native client for consent every time (RFC 8252 8.6), and a read-only token may read but not write',
    async () => {
      // A fresh authorization for `read` only, as a client that wants no more asks for it, listening on
      // another loopback port this time (RFC 8252 7.3: any port of a registered loopback redirect URI).
      const otherPort = await startCallback();
      closeAfter.push(otherPort);
      expect(otherPort.redirectUri).not.toBe(callback.redirectUri);
      const reader = new MemoryOAuthClient({
        redirectUri: otherPort.redirectUri,
        metadata: native.clientMetadata,
      });
      const registered = native.clientInformation();
      if (!registered) throw new Error('The native client was not registered.');
      reader.saveClientInformation(registered);
      expect(await auth(reader, { serverUrl: server.mcpUrl, scope: 'read' })).toBe('REDIRECT');
      const scope = reader.authorizationUrl?.searchParams.get('scope')?.split(' ');
      expect(scope).toContain('read');
      expect(scope).not.toContain('write');
      expect(reader.authorizationUrl?.searchParams.get('redirect_uri')).toBe(otherPort.redirectUri);
      const answer = await personAuthorizes(person, reader.authorizationUrl as URL, otherPort, {
        apiKey: key,
        expect: ['consent'], // signed in already; a native client's consent is asked again
      });
      expect(answer.consentText).toMatch(/Read/u);
      expect(answer.consentText).not.toMatch(/Write:/u);
      expect(
        await auth(reader, {
          serverUrl: server.mcpUrl,
          authorizationCode: answer.params.get('code') as string,
          iss: answer.params.get('iss') as string,
        }),
      ).toBe('AUTHORIZED');
      expect(reader.tokenSet.scope?.split(' ')).toContain('read');
      expect(reader.tokenSet.scope?.split(' ')).not.toContain('write');

      // Over HTTP: 403 insufficient_scope for a tool that writes; reading works.
      const token = reader.tokenSet.access_token;
      const write = await rawToolCall(server, token, 'memory_store', {
        memory_key: 'nope',
        memory_value: 'x',
      });
      expect(write.status).toBe(403);
      expect(write.challenge).toMatch(/^Bearer /u);
      expect(write.challenge).toContain('error="insufficient_scope"');
      expect(write.body.error.data).toMatchObject({ code: 'insufficient_scope', scope: 'write' });
      // Hidden in a batch (2025-03-26 accepts them) behind a call it may make, it is refused the same.
      const batch = await fetch(server.mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-03-26',
        },
        body: JSON.stringify([
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          {
            jsonrpc: '2.0',
            id: 2,
            method: 'tools/call',
            params: { name: 'memory_store', arguments: { memory_key: 'batched', memory_value: 'x' } },
          },
        ]),
      });
      expect(batch.status).toBe(403);
      expect(batch.headers.get('www-authenticate')).toContain('error="insufficient_scope"');

      // Through the SDK: the same 403, as its InsufficientScopeError; memory_retrieve answers.
      const client = new Client({ name: 'reader', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(server.mcpUrl, {
          authProvider: reader,
          onInsufficientScope: 'throw',
        }),
      );
      expect(await retrieve(client, 'native-note')).toBe('from a registered client');
      await expect(
        client.callTool({ name: 'memory_store', arguments: { memory_key: 'nope', memory_value: 'x' } }),
      ).rejects.toThrow(InsufficientScopeError);
      await client.close();
      for (const memoryKey of ['nope', 'batched']) {
        const notStored = await server.request('GET', '/api/ac/memory', {
          key,
          query: { agent_key: key, memory_key: memoryKey },
        });
        expect(notStored.status, memoryKey).toBe(404);
      }
    },
    FLOW_TIMEOUT,
  );

  it('hears a Deny: the client gets access_denied with its state and the issuer, and no token', async () => {
    const denied = new MemoryOAuthClient({
      redirectUri: callback.redirectUri,
      metadata: native.clientMetadata,
    });
    const registered = native.clientInformation();
    if (!registered) throw new Error('The native client was not registered.');
    denied.saveClientInformation(registered);
    expect(await auth(denied, { serverUrl: server.mcpUrl })).toBe('REDIRECT');
    const answer = await personAuthorizes(person, denied.authorizationUrl as URL, callback, {
      apiKey: key,
      expect: ['consent'],
      decision: 'deny',
    });
    expect(answer.problems).toEqual([]);
    expect(Object.fromEntries(answer.params)).toMatchObject({
      error: 'access_denied',
      state: denied.lastState,
      iss: server.issuer,
    });
    expect(answer.params.get('code')).toBeNull();
    expect(denied.tokens()).toBeUndefined();
  });

  it("accepts Claude's redirect URI: the authorization request reaches the sign-in page", async () => {
    const registered = await fetch(new URL('/oauth/register', server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Claude',
        redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    });
    const client = (await registered.json()) as Record<string, unknown>;
    expect(registered.status, JSON.stringify(client)).toBe(201);
    expect(client).toMatchObject({
      client_id: expect.any(String),
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback'],
      token_endpoint_auth_method: 'none',
    });
    expect(client).not.toHaveProperty('client_secret');
    const url = new URL('/oauth/authorize', server.issuer);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id as string,
      redirect_uri: 'https://claude.ai/api/mcp/auth_callback',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      scope: 'read write',
      resource: `${server.issuer}/mcp`,
      state: 'claude-state',
    }).toString();
    const fresh = await browser.newContext();
    try {
      const page = await fresh.newPage();
      await page.goto(url.href);
      expect(new URL(page.url()).pathname).toMatch(/^\/oauth\/interaction\/[\w-]+$/u);
      await expect(page.locator('h1').innerText()).resolves.toBe('Sign in to connect Claude');
      // Signed in, the consent page names where the answer goes: claude.ai, not this computer.
      await page.getByLabel('Your agent-context API key').fill(key);
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
      const consent = await page.locator('main').innerText();
      expect(consent).toContain('claude.ai');
      expect(consent).not.toMatch(/a program on this computer/u);
    } finally {
      await fresh.close();
    }
  });
});

describe('a connector whose access token expires', () => {
  let shortStore: StoreOf;
  let short: OAuthServer;

  beforeAll(async () => {
    shortStore = await freshStore();
    short = await startOAuthServer({ store: shortStore, env: { AC_OAUTH_ACCESS_TOKEN_TTL: '2s' } });
  }, 60_000);
  afterAll(async () => {
    await short?.stop();
    await shortStore?.remove();
  });

  it(
    'is refreshed by the SDK on the 401, with a rotated refresh token; the old one is refused',
    async () => {
      const shortKey = await short.register();
      const provider = new MemoryOAuthClient({
        redirectUri: callback.redirectUri,
        clientMetadataUrl: cimd.clientId,
        metadata: metadataFor(callback.redirectUri),
      });
      await expect(connected(provider, short)).rejects.toThrow(UnauthorizedError);
      const context = await browser.newContext();
      try {
        const answer = await personAuthorizes(context, provider.authorizationUrl as URL, callback, {
          apiKey: shortKey,
          expect: ['sign-in', 'consent'],
        });
        expect(answer.params.get('iss')).toBe(short.issuer);
        await new StreamableHTTPClientTransport(short.mcpUrl, { authProvider: provider }).finishAuth(
          answer.params,
        );
      } finally {
        await context.close();
      }
      const first = provider.tokenSet;
      expect(first.expires_in).toBeLessThanOrEqual(2);
      const client = await connected(provider, short);
      await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: 'k', memory_value: 'before expiry' },
      });

      // Wait until the server refuses the access token, then call again: the SDK refreshes and retries.
      await expect
        .poll(
          async () =>
            (await rawToolCall(short, first.access_token, 'memory_retrieve', { memory_key: 'k' })).status,
          {
            timeout: 10_000,
            interval: 250,
          },
        )
        .toBe(401);
      expect(await retrieve(client, 'k')).toBe('before expiry');
      await client.close();
      const second = provider.tokenSet;
      expect(provider.saved).toHaveLength(2);
      expect(second.access_token).not.toBe(first.access_token);
      expect(second.refresh_token).toMatch(/^[\w-]{43}$/u);
      expect(second.refresh_token).not.toBe(first.refresh_token);
      expect(await refreshAt(short, cimd.clientId, first.refresh_token as string)).toMatchObject({
        status: 400,
        body: { error: 'invalid_grant' },
      });
      expect(logProblems(short.log())).toEqual([]);
    },
    FLOW_TIMEOUT,
  );
});

it('ran on the store the run names, and logged no stack trace and answered no 5xx', () => {
  expect(server.log()).toMatch(store.logged);
  expect(logProblems(server.log())).toEqual([]);
});
