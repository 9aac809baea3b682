/**
 * The console's Connected apps page in a real Chromium. On a server with OAuth on (a loopback AC_PUBLIC_URL),
 * two apps are allowed through the real authorization flow, done over plain HTTP as a client and a person
 * would (dynamic registration, authorize with PKCE, the sign-in and consent forms, the token exchange), one of
 * them then used at /mcp; the page lists both with their host, access and last use, revokes one after a
 * confirmation (cancelled once), which stops its token at once, then the other, leaving the empty state. On a
 * server with OAuth off the page says so instead of an error. Both widths, axe, no console error.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { lookAtBothWidths, type PageWatch } from '../helpers/browser.js';
import { browse, CookieJar, freePort, pageOf } from '../helpers/oauth-http.js';
import type { TestServer } from '../helpers/test-server.js';
import { useConsoleSuite } from './console-suite.js';

const PORT = await freePort();
const ISSUER = `http://127.0.0.1:${PORT}`;
/** A native app's loopback callback (nothing listens there: the flow stops at the redirect to it). */
const CALLBACK_HOST = '127.0.0.1:53682';
const REDIRECT_URI = `http://${CALLBACK_HOST}/cb`;

/** How Chromium logs a fetch answered 404 (the list's answer when OAuth is off). */
const STATUS_404 = /status of 404/;

const base64url = (bytes: Buffer) => bytes.toString('base64url');

/**
 * An app allowed by the person with `key`, through the whole flow: registered (RFC 7591), authorized with PKCE
 * for `scope`, signed in and allowed on the interaction pages; with `exchange`, its code is exchanged for an
 * access token, as the app would.
 */
async function allowApp(
  server: TestServer,
  key: string,
  name: string,
  scope: string,
  exchange = false,
): Promise<{ clientId: string; accessToken?: string }> {
  const registered = await server.request('POST', '/oauth/register', {
    body: {
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
      client_name: name,
      application_type: 'native',
    },
  });
  expect(registered.status, registered.text).toBe(201);
  const clientId = registered.body.client_id as string;
  const verifier = base64url(randomBytes(32));
  const authorize = new URL('/oauth/authorize', ISSUER);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope,
    resource: `${ISSUER}/mcp`,
    state: 'console-test',
    code_challenge: base64url(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
  }))
    authorize.searchParams.set(k, v);

  const jar = new CookieJar();
  const signIn = pageOf(await browse(jar, authorize.href, REDIRECT_URI));
  expect(signIn.status, signIn.text).toBe(200);
  expect(signIn.text).toContain(name);
  const uid = /\/oauth\/interaction\/([^/?#]+)/.exec(signIn.url)?.[1];
  expect(uid, signIn.url).toBeTruthy();
  const consent = pageOf(
    await browse(jar, `${ISSUER}/oauth/interaction/${uid}/sign-in`, REDIRECT_URI, { api_key: key }),
  );
  expect(consent.status, consent.text).toBe(200);
  const consentUid = /\/oauth\/interaction\/([^/?#]+)/.exec(consent.url)?.[1];
  const done = await browse(jar, `${ISSUER}/oauth/interaction/${consentUid}/consent`, REDIRECT_URI, {
    decision: 'allow',
  });
  if (!('callback' in done)) throw new Error(`expected the callback, got ${done.status} at ${done.url}`);
  expect(done.callback.searchParams.get('state')).toBe('console-test');
  const code = done.callback.searchParams.get('code');
  expect(code).toBeTruthy();
  if (!exchange) return { clientId };

  const token = await fetch(new URL('/oauth/token', ISSUER), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code as string,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${ISSUER}/mcp`,
    }),
  });
  const tokens = (await token.json()) as { access_token?: string };
  expect(token.status, JSON.stringify(tokens)).toBe(200);
  return { clientId, accessToken: tokens.access_token as string };
}

/** An MCP `initialize` at /mcp with an access token: its HTTP status. */
async function mcpStatus(accessToken: string): Promise<number> {
  const res = await fetch(new URL('/mcp', ISSUER), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'console-oauth-test', version: '1.0.0' },
      },
    }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function openApps(
  suite: ReturnType<typeof useConsoleSuite>,
  key: string,
  allow: RegExp[] = [],
): Promise<{ page: Page; watch: PageWatch }> {
  const opened = await suite.newPage(allow);
  const { page } = opened;
  await page.goto(`${suite.server.url}/console`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
  await page
    .getByRole('navigation', { name: 'Main' })
    .getByRole('link', { name: 'Connected apps', exact: true })
    .click();
  await page.getByRole('heading', { level: 1, name: 'Connected apps' }).waitFor();
  return opened;
}

describe('the console’s connected apps, OAuth on', { timeout: 60_000 }, () => {
  const suite = useConsoleSuite({ env: { PORT: String(PORT), AC_PUBLIC_URL: ISSUER, AC_RATE_LIMIT: 'on' } });

  const listed = async (key: string) => {
    const res = await suite.server.request('GET', '/api/ac/oauth/clients', { key });
    expect(res.status, res.text).toBe(200);
    return res.body.clients as { client_id: string; client_name: string; last_used_at: string | null }[];
  };

  it('lists the apps the account allowed and revokes them after a confirmation', async () => {
    expect(suite.server.url).toBe(ISSUER);
    const key = await suite.server.register();
    const used = await allowApp(suite.server, key, 'Test App', 'read write', true);
    const accessToken = used.accessToken as string;
    expect(await mcpStatus(accessToken)).toBe(200);
    // The use is recorded by the side: wait for it to show before the console reads the list.
    await expect
      .poll(async () => (await listed(key)).find((c) => c.client_id === used.clientId)?.last_used_at ?? null)
      .not.toBeNull();
    const unused = await allowApp(suite.server, key, 'Notes Helper', 'read');
    expect((await listed(key)).map((c) => c.client_name)).toEqual(['Notes Helper', 'Test App']);

    const { page, watch } = await openApps(suite, key);
    const table = page.getByTestId('apps');
    await table.waitFor();
    // Newest allowed first: name, host, access, when allowed and last used.
    const rows = table.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    const helper = table.getByRole('row', { name: /Notes Helper/ });
    const app = table.getByRole('row', { name: /Test App/ });
    expect(await rows.first().textContent()).toContain('Notes Helper');
    expect(await helper.getByRole('rowheader').textContent()).toBe(`Notes Helper${CALLBACK_HOST}`);
    expect(await helper.locator('.badge').allTextContents()).toEqual(['Read']);
    expect(await helper.locator('td').nth(2).textContent()).toBe('never');
    expect(await app.getByRole('rowheader').textContent()).toBe(`Test App${CALLBACK_HOST}`);
    expect(await app.locator('.badge').allTextContents()).toEqual(['Read', 'Write']);
    expect(await app.locator('td').nth(1).locator('time').count()).toBe(1);
    expect(await app.locator('td').nth(2).locator('time').count()).toBe(1);
    expect(await lookAtBothWidths(page, 'console-apps')).toEqual([]);

    // Revoke asks first; cancelling keeps the app.
    await page.getByRole('button', { name: 'Revoke… Test App' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke Test App?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(CALLBACK_HOST);
    expect(await lookAtBothWidths(page, 'console-apps-revoke')).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await listed(key)).map((c) => c.client_name)).toEqual(['Notes Helper', 'Test App']);
    expect(await mcpStatus(accessToken)).toBe(200);

    // Revoked: gone from the page and the API, and its token stops at once.
    await page.getByRole('button', { name: 'Revoke… Test App' }).click();
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/Revoked Test App/);
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('Notes Helper');
    // The focus goes to the list, not to the body the removed button leaves it on.
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Allowed apps');
    expect((await listed(key)).map((c) => c.client_id)).toEqual([unused.clientId]);
    expect(await mcpStatus(accessToken)).toBe(401);

    // The last one: the empty state.
    await page.getByRole('button', { name: 'Revoke… Notes Helper' }).click();
    await page
      .getByRole('dialog', { name: 'Revoke Notes Helper?' })
      .getByRole('button', { name: 'Revoke', exact: true })
      .click();
    await expect
      .poll(() => page.getByTestId('apps-empty').textContent())
      .toBe(
        'No app has been allowed yet. Apps such as Claude or ChatGPT ask for access when you add this server as a connector.',
      );
    expect(await listed(key)).toEqual([]);
    expect(await lookAtBothWidths(page, 'console-apps-empty')).toEqual([]);
    expect(watch.problems).toEqual([]);
  });

  it('shows only the signed-in account’s apps', async () => {
    const mine = await suite.server.register();
    const theirs = await suite.server.register();
    await allowApp(suite.server, theirs, 'Someone Else’s App', 'read');
    const { page, watch } = await openApps(suite, mine);
    await page.getByTestId('apps-empty').waitFor();
    expect(await page.getByTestId('apps').count()).toBe(0);
    expect(await listed(mine)).toEqual([]);
    expect(watch.problems).toEqual([]);
  });
});

describe('the console’s connected apps, OAuth off', { timeout: 60_000 }, () => {
  const suite = useConsoleSuite();

  it('says that OAuth is off on this server and how the operator turns it on', async () => {
    const key = await suite.server.register();
    const answer = await suite.server.request('GET', '/api/ac/oauth/clients', { key });
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe('not_found');
    const { page, watch } = await openApps(suite, key, [STATUS_404]);
    const off = page.getByTestId('oauth-off');
    await off.waitFor();
    expect(await off.textContent()).toMatch(/AC_PUBLIC_URL.*docs\/mcp\.md/);
    expect(await page.getByRole('heading', { level: 2, name: 'OAuth is off on this server' }).count()).toBe(
      1,
    );
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await lookAtBothWidths(page, 'console-apps-oauth-off')).toEqual([]);
    expect(watch.problems).toEqual([]);
  });
});
