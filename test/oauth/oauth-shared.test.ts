/**
 * Two instances on one PostgreSQL database behind one public URL (the issuer, a relay the test points at
 * either), whatever the run's store: an authorization begun on A is finished on B (shared cookie keys,
 * interactions and sessions), a token issued by A works on B, a refresh token of A is rotated on B and then
 * refused on A, a reuse on one revokes the family on both, and a revocation in A's console is seen by B at
 * its next request.
 */
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../helpers/browser.js';
import {
  type Callback,
  type CimdHost,
  FrontDoor,
  logProblems,
  MemoryOAuthClient,
  type OAuthServer,
  personAuthorizes,
  postgresStore,
  rawToolCall,
  refreshAt,
  type StoreOf,
  startCallback,
  startCimdHost,
  startOAuthServer,
  unpooledFetch,
} from './oauth-harness.js';

let store: StoreOf;
let door: FrontDoor;
let a: OAuthServer;
let b: OAuthServer;
let callback: Callback;
let cimd: CimdHost;
let browser: Browser;
let key: string;
/** The SDK's fetch through the door: no kept-alive connection for the door to cut. */
let doorFetch: typeof fetch;

beforeAll(async () => {
  store = await postgresStore();
  door = await FrontDoor.open();
  doorFetch = await unpooledFetch();
  // A first, alone: it makes the authorization server's shared secrets, which B then reads.
  [a, callback, browser] = await Promise.all([
    startOAuthServer({ store, publicUrl: door.url }),
    startCallback(),
    launchBrowser(),
  ]);
  b = await startOAuthServer({ store, publicUrl: door.url });
  door.sendTo(a);
  cimd = await startCimdHost((clientId) => ({
    client_id: clientId,
    client_name: 'Shared test connector',
    redirect_uris: [callback.redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }));
  key = await a.register();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([a?.stop(), b?.stop(), callback?.close(), cimd?.close(), door?.close()]);
  await store?.remove();
});

function connector(): MemoryOAuthClient {
  return new MemoryOAuthClient({
    redirectUri: callback.redirectUri,
    clientMetadataUrl: cimd.clientId,
    metadata: {
      client_name: 'Shared test connector',
      redirect_uris: [callback.redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
  });
}

it('shares one authorization server: begun on A, finished on B; tokens of either work on both; a revocation on A is seen by B', async () => {
  expect(a.log()).toMatch(store.logged);
  expect([a.issuer, b.issuer]).toEqual([door.url, door.url]);
  const provider = connector();
  const mcp = new URL('/mcp', door.url);
  door.sendTo(a);
  const first = new StreamableHTTPClientTransport(mcp, { authProvider: provider, fetch: doorFetch });
  await expect(new Client({ name: 'shared', version: '1.0.0' }).connect(first)).rejects.toThrow(
    UnauthorizedError,
  );

  // A sends the person's browser to the sign-in page; B answers the sign-in and the consent.
  const context = await browser.newContext();
  const arrived = callback.next();
  try {
    const page = await context.newPage();
    await page.goto((provider.authorizationUrl as URL).href);
    const signIn = new URL(page.url());
    expect(signIn.pathname).toMatch(/^\/oauth\/interaction\/[\w-]+$/u);
    await expect(page.locator('h1').innerText()).resolves.toMatch(
      /^Sign in to connect Shared test connector/u,
    );
    door.sendTo(b);
    await page.getByLabel('Your agent-context API key').fill(key);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
    await expect(page.locator('h1').innerText()).resolves.toMatch(/asks to use your agent-context account/u);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Allow' }).click()]);
  } finally {
    await context.close();
  }
  const params = await arrived;
  expect(params.get('iss')).toBe(door.url);
  expect(params.get('state')).toBe(provider.lastState);
  const signedIn = /"path":"\/oauth\/interaction\/[\w-]+\/sign-in"/u;
  expect(b.log(), 'B answered the sign-in').toMatch(signedIn);
  expect(a.log(), 'A answered no sign-in').not.toMatch(signedIn);
  // The code, issued by B, is redeemed at A.
  door.sendTo(a);
  await first.finishAuth(params);
  const tokens = provider.tokenSet;

  // A token issued by A works on B, through the SDK as through raw HTTP.
  door.sendTo(b);
  const onB = new Client({ name: 'shared-b', version: '1.0.0' });
  await onB.connect(new StreamableHTTPClientTransport(mcp, { authProvider: provider, fetch: doorFetch }));
  const stored = await onB.callTool({
    name: 'memory_store',
    arguments: { memory_key: 'shared', memory_value: 'written on B' },
  });
  expect(stored.isError, JSON.stringify(stored)).not.toBe(true);
  await onB.close();
  const onA = await rawToolCall(a, tokens.access_token, 'memory_retrieve', { memory_key: 'shared' });
  expect(onA.status).toBe(200);
  expect(onA.body.result.structuredContent).toMatchObject({ memory: { memory_value: 'written on B' } });

  // A's refresh token is rotated on B; A then refuses the old one (and that reuse revokes the family).
  const rotated = await refreshAt(b, cimd.clientId, tokens.refresh_token as string);
  expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
  expect(
    (await rawToolCall(a, rotated.body.access_token, 'memory_retrieve', { memory_key: 'shared' })).status,
  ).toBe(200);
  const again = await refreshAt(b, cimd.clientId, rotated.body.refresh_token);
  expect(again.status).toBe(200);

  // Revoked in A's console: B refuses the newest token at the next request.
  const token = again.body.access_token as string;
  expect((await rawToolCall(b, token, 'memory_retrieve', { memory_key: 'shared' })).status).toBe(200);
  const revoked = await a.request('DELETE', '/api/ac/oauth/clients', {
    key,
    query: { client_id: cimd.clientId },
  });
  expect(revoked.status, revoked.text).toBe(200);
  const refused = await rawToolCall(b, token, 'memory_retrieve', { memory_key: 'shared' });
  expect(refused.status).toBe(401);
  expect(refused.challenge).toContain('error="invalid_token"');
  expect((await refreshAt(b, cimd.clientId, again.body.refresh_token)).body.error).toBe('invalid_grant');
  expect((await b.request('GET', '/api/ac/oauth/clients', { key })).body.clients).toEqual([]);
}, 90_000);

it('a refresh token reused on one instance revokes the family on both', async () => {
  // A second authorization, all on A (a new browser context: signed in nowhere).
  door.sendTo(a);
  const provider = connector();
  const first = new StreamableHTTPClientTransport(new URL('/mcp', door.url), {
    authProvider: provider,
    fetch: doorFetch,
  });
  await expect(new Client({ name: 'shared', version: '1.0.0' }).connect(first)).rejects.toThrow(
    UnauthorizedError,
  );
  const context = await browser.newContext();
  try {
    const answer = await personAuthorizes(context, provider.authorizationUrl as URL, callback, {
      apiKey: key,
      expect: ['sign-in', 'consent'], // the console revoked the first consent
    });
    await first.finishAuth(answer.params);
  } finally {
    await context.close();
  }
  const start = provider.tokenSet;
  const rotated = await refreshAt(a, cimd.clientId, start.refresh_token as string);
  expect(rotated.status).toBe(200);
  expect((await refreshAt(b, cimd.clientId, start.refresh_token as string)).body.error).toBe('invalid_grant');
  expect(
    (await rawToolCall(a, rotated.body.access_token, 'memory_retrieve', { memory_key: 'shared' })).status,
  ).toBe(401);
  expect((await refreshAt(a, cimd.clientId, rotated.body.refresh_token)).body.error).toBe('invalid_grant');
}, 90_000);

it('logged no stack trace and answered no 5xx on either instance', () => {
  expect(logProblems(a.log())).toEqual([]);
  expect(logProblems(b.log())).toEqual([]);
});
