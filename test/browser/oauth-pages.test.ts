/**
 * The authorization server's pages (src/oauth/pages) in a real Chromium against a real server with OAuth on:
 * the sign-in page (a wrong key, then the right one), the consent page (allow and deny, each answered at the
 * client's redirect URI), the page that shows a new account's key once, and the error pages (an unknown
 * sign-in, a redirect URI the client did not register). Each page is looked at at both widths (screenshots
 * under test-output/screenshots, every axe-core violation, no sideways scroll at phone width), and no page
 * may log an error, fail a request or reach another origin but the client's redirect (which is how a CSP
 * violation shows, form-action on a form post's redirects included).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  launchBrowser,
  type PageWatch,
  screenshot,
  VIEWPORTS,
  type ViewportName,
  watchPage,
} from '../helpers/browser.js';
import { freePort } from '../helpers/oauth-http.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const AXE_SOURCE = readFileSync(path.resolve('node_modules/axe-core/axe.min.js'), 'utf8');
/** How Chromium logs a page answered with an error status (the ones a test provokes on purpose). */
const STATUS_4XX = /status of 40[01]/;
/** The paths the pages' forms land on: the step's page, the sign-in's and the registration's answers. */
const INTERACTION = /^\/oauth\/interaction\/[\w-]+$/;
const SIGN_IN_POST = /^\/oauth\/interaction\/[\w-]+\/sign-in$/;
const REGISTER_POST = /^\/oauth\/interaction\/[\w-]+\/register$/;

/** The client's side of the redirect: a page at /cb that says the answer arrived. */
async function startClientApp(): Promise<{ origin: string; close(): Promise<void> }> {
  const app: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Test App</title><h1>Answer received</h1></html>');
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(app.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        app.closeAllConnections();
        app.close(() => resolve());
      }),
  };
}

interface Look {
  viewport: ViewportName;
  problem: string;
}

/**
 * Every axe-core violation (whatever its impact) and a page wider than the window, at both widths, with a
 * screenshot at each (`oauth-<name>-<viewport>.png`). Leaves the page at the desktop width.
 */
async function lookAtBothWidths(page: Page, name: string): Promise<Look[]> {
  const found: Look[] = [];
  for (const viewport of ['desktop', 'phone'] as const) {
    await page.setViewportSize(VIEWPORTS[viewport]);
    await page.evaluate(
      'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))',
    );
    await screenshot(page, `oauth-${name}`, viewport);
    const [scrollWidth, innerWidth] = (await page.evaluate(
      '[document.scrollingElement.scrollWidth, innerWidth]',
    )) as [number, number];
    if (scrollWidth > innerWidth)
      found.push({
        viewport,
        problem: `scrolls sideways: ${scrollWidth}px wide in a ${innerWidth}px window`,
      });
    await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(async () => {
      const axe = (globalThis as any).axe;
      const result = await axe.run((globalThis as any).document, { resultTypes: ['violations'] });
      return result.violations.map(
        (v: any) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n: any) => n.target.join(' '))}`,
      );
    })) as string[];
    for (const problem of violations) found.push({ viewport, problem });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
  return found;
}

/** What every page of the authorization server must send: its own strict policy, and never be cached. */
function expectPageHeaders(response: Response | null, status: number): void {
  expect(response, 'no response').not.toBeNull();
  const headers = (response as Response).headers();
  expect((response as Response).status(), (response as Response).url()).toBe(status);
  expect(headers['content-type']).toBe('text/html; charset=utf-8');
  const csp = headers['content-security-policy'] ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('script-src');
  expect(headers['cache-control']).toContain('no-store');
}

/** A web client's redirect URI, not on this computer (the test answers it inside Chromium). */
const WEB_REDIRECT = 'https://app.example.test/cb';

describe('the OAuth sign-in and consent pages', { timeout: 60_000 }, () => {
  let server: TestServer;
  let issuer: string;
  let clientApp: Awaited<ReturnType<typeof startClientApp>>;
  let redirectUri: string;
  let clientId: string;
  /**
   * A web application's client, answered at an https origin (which the browser reaches through a route the
   * test fulfils): its consent is remembered (an answer to a loopback address is asked for every time).
   */
  let webClientId: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    [browser, clientApp, server] = await Promise.all([
      launchBrowser(),
      startClientApp(),
      startTestServer({ env: { PORT: String(port), AC_PUBLIC_URL: issuer } }),
    ]);
    expect(server.url).toBe(issuer);
    redirectUri = `${clientApp.origin}/cb`;
    const register = async (client_name: string, application_type: string, redirects = [redirectUri]) => {
      const registered = await server.request('POST', '/oauth/register', {
        body: {
          redirect_uris: redirects,
          token_endpoint_auth_method: 'none',
          client_name,
          application_type,
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
      });
      expect(registered.status, registered.text).toBe(201);
      return registered.body.client_id as string;
    };
    clientId = await register('Test App', 'native');
    webClientId = await register('Test Web App', 'web', [WEB_REDIRECT]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await clientApp?.close();
  });
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });

  /** A page of a fresh desktop context (no cookies: a new person), watched. */
  async function newPage(allow: RegExp[] = []): Promise<{ page: Page; watch: PageWatch }> {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    contexts.push(context);
    const page = await context.newPage();
    return { page, watch: watchPage(page, issuer, allow) };
  }

  /** The watch's problems but the one navigation the flow ends with, to the client's redirect URI. */
  const problemsOf = (watch: PageWatch) =>
    watch.problems.filter((p) => !p.startsWith(`request to another origin: ${redirectUri}?`));

  /** An authorization request as an MCP client makes it, with its PKCE verifier. */
  function authorization(state: string, params: Record<string, string> = {}) {
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state,
      scope: 'read write',
      resource: `${issuer}/mcp`,
      ...params,
    });
    return { url: `${issuer}/oauth/authorize?${query}`, verifier };
  }

  /** Submits the page's form with `button` and returns the response of the page it lands on. */
  async function submit(page: Page, button: string, lands: RegExp): Promise<Response | null> {
    const [response] = await Promise.all([
      page.waitForResponse(
        (r) =>
          lands.test(new URL(r.url()).pathname) &&
          r.request().resourceType() === 'document' &&
          (r.status() < 300 || r.status() >= 400),
      ),
      page.getByRole('button', { name: button, exact: true }).click(),
    ]);
    await page.waitForLoadState();
    return response;
  }

  /** The query of the page the browser was sent to, which must be the client's redirect URI. */
  async function answerAtClient(page: Page, watch: PageWatch): Promise<URLSearchParams> {
    await page
      .waitForURL((url) => url.href.startsWith(`${redirectUri}?`), { timeout: 5000 })
      .catch(() => {
        throw new Error(`not sent to the client: at ${page.url()}; ${JSON.stringify(watch.problems)}`);
      });
    const url = new URL(page.url());
    for (const name of ['state', 'iss', 'code', 'error'])
      expect(url.searchParams.getAll(name).length, name).toBeLessThanOrEqual(1);
    return url.searchParams;
  }

  async function exchange(code: string, verifier: string) {
    return server.request('POST', '/oauth/token', {
      contentType: 'application/x-www-form-urlencoded',
      rawBody: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: clientId,
        resource: `${issuer}/mcp`,
      }).toString(),
    });
  }

  it('signs in with the key after a wrong one, shows the consent, and Allow answers the client with a code', async () => {
    const email = `oauth-allow-${process.pid}@example.com`;
    const key = await server.register(email);
    const { page, watch } = await newPage([STATUS_4XX]);
    const { url, verifier } = authorization('state-allow');

    // The sign-in page.
    const signIn = await page.goto(url);
    expect(page.url()).toMatch(new RegExp(`^${issuer}/oauth/interaction/[\\w-]+$`));
    expectPageHeaders(signIn, 200);
    const heading = page.getByRole('heading', { level: 1 });
    expect(await heading.textContent()).toBe('Sign in to connect Test App');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await lookAtBothWidths(page, 'sign-in')).toEqual([]);

    // A wrong key: the same page, 401, with one sentence saying what went wrong; no cookie changes.
    const cookies = async () => (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).sort();
    const before = await cookies();
    await page.getByLabel('Your agent-context API key').fill('ac_this-is-not-a-key');
    const wrong = await submit(page, 'Sign in', SIGN_IN_POST);
    expectPageHeaders(wrong, 401);
    expect(await page.getByRole('alert').textContent()).toBe(
      'That key is not a valid agent-context API key. Paste the whole key, starting with ac_.',
    );
    expect(await heading.textContent()).toBe('Sign in to connect Test App');
    expect(await page.getByLabel('Your agent-context API key').inputValue()).toBe('');
    expect(await page.getByLabel('E-mail address').inputValue()).toBe('');
    expect(await cookies()).toEqual(before);
    expect(await lookAtBothWidths(page, 'sign-in-error')).toEqual([]);

    // The right key: the consent page.
    await page.getByLabel('Your agent-context API key').fill(key);
    const consent = await submit(page, 'Sign in', INTERACTION);
    expectPageHeaders(consent, 200);
    expect(page.url()).toMatch(new RegExp(`^${issuer}/oauth/interaction/[\\w-]+$`));
    expect(await heading.textContent()).toBe('Test App asks to use your agent-context account');
    const main = (await page.locator('main').innerText()) ?? '';
    expect(main).toMatch(new RegExp(`Signed in as\\s+${email}`));
    expect(main).toMatch(new RegExp(`Answer goes to\\s+${new URL(redirectUri).host}`));
    expect(await page.getByRole('note').textContent()).toMatch(/a program on this computer/);
    expect(await page.getByRole('list').getByRole('listitem').allTextContents()).toEqual([
      expect.stringMatching(/^Read: /),
      expect.stringMatching(/^Write: /),
    ]);
    expect(main).not.toContain(key);
    // form-action lets the post's redirects reach the client.
    expect(consent?.headers()['content-security-policy']).toContain(`form-action 'self' ${clientApp.origin}`);
    expect(await lookAtBothWidths(page, 'consent')).toEqual([]);

    // Allow: the client gets a code, its state and the issuer; the code buys a token.
    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    const answer = await answerAtClient(page, watch);
    expect(answer.get('state')).toBe('state-allow');
    expect(answer.get('iss')).toBe(issuer);
    expect(answer.get('error')).toBeNull();
    expect(answer.get('code')).toMatch(/^[\w-]{20,}$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Answer received');
    const token = await exchange(answer.get('code') as string, verifier);
    expect(token.status, token.text).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer', scope: expect.stringMatching(/read/) });
    expect(problemsOf(watch)).toEqual([]);
  });

  it('Deny answers the client with access_denied and its state, and no code', async () => {
    const key = await server.register(`oauth-deny-${process.pid}@example.com`);
    const { page, watch } = await newPage();
    await page.goto(authorization('state-deny').url);
    await page.getByLabel('Your agent-context API key').fill(key);
    await submit(page, 'Sign in', INTERACTION);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    const answer = await answerAtClient(page, watch);
    expect(answer.get('error')).toBe('access_denied');
    expect(answer.get('state')).toBe('state-deny');
    expect(answer.get('iss')).toBe(issuer);
    expect(answer.get('code')).toBeNull();
    expect(problemsOf(watch)).toEqual([]);
  });

  it('makes an account on the way, shows its key once, then goes on to the consent', async () => {
    const email = `oauth-new-${process.pid}@example.com`;
    const { page, watch } = await newPage();
    const { url, verifier } = authorization('state-new');
    await page.goto(url);
    await page.getByLabel('E-mail address').fill(email);
    const registered = await submit(page, 'Create an account', REGISTER_POST);
    expectPageHeaders(registered, 200);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Your account is ready');
    const key = ((await page.locator('.key').textContent()) ?? '').trim();
    expect(key).toMatch(/^ac_/);
    expect((await server.request('GET', '/api/ac/account', { key })).body.email).toBe(email);
    expect(await page.getByRole('note').textContent()).toMatch(/shown only this once/);
    expect(await lookAtBothWidths(page, 'registered')).toEqual([]);

    await page.getByRole('link', { name: 'I have saved it, continue' }).click();
    await page.waitForURL((u) => /\/oauth\/interaction\/[\w-]+$/.test(u.pathname));
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'Test App asks to use your agent-context account',
    );
    expect(await page.locator('main').innerText()).toMatch(new RegExp(`Signed in as\\s+${email}`));
    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    const answer = await answerAtClient(page, watch);
    expect(answer.get('state')).toBe('state-new');
    const token = await exchange(answer.get('code') as string, verifier);
    expect(token.status, token.text).toBe(200);
    expect(problemsOf(watch)).toEqual([]);
  });

  it('a person who allowed a web client before goes from the sign-in straight back to it', async () => {
    const key = await server.register(`oauth-again-${process.pid}@example.com`);
    for (const [round, state] of ['state-first', 'state-again'].entries()) {
      // A new browser each time: no session, so the sign-in page again; the consent is remembered. The
      // sign-in form's post is then redirected to the client, which its form-action must allow: the browser
      // sends that request (the made-up host then fails to resolve, which is the only problem allowed).
      const { page, watch } = await newPage();
      await page.goto(authorization(state, { client_id: webClientId, redirect_uri: WEB_REDIRECT }).url);
      const sent = page.waitForRequest((r) => r.url().startsWith(`${WEB_REDIRECT}?`), { timeout: 5000 });
      await page.getByLabel('Your agent-context API key').fill(key);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      if (round === 0) await page.getByRole('button', { name: 'Allow', exact: true }).click();
      const answer = new URL((await sent).url()).searchParams;
      expect(answer.get('state')).toBe(state);
      expect(answer.get('code')).toMatch(/^[\w-]{20,}$/);
      expect(answer.get('iss')).toBe(issuer);
      const atClient = (p: string) =>
        p.startsWith(`request to another origin: ${WEB_REDIRECT}?`) ||
        (p.startsWith(`request failed: ${WEB_REDIRECT}?`) && p.endsWith('(net::ERR_NAME_NOT_RESOLVED)'));
      expect(
        watch.problems.filter((p) => !atClient(p)),
        `round ${round + 1}`,
      ).toEqual([]);
    }
  });

  it('a long client name wraps on both pages rather than widening them', async () => {
    const name = `Client${'-with-a-very-long-name'.repeat(4)}${'X'.repeat(60)}`;
    const registered = await server.request('POST', '/oauth/register', {
      body: {
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'none',
        client_name: name,
        application_type: 'native',
      },
    });
    expect(registered.status, registered.text).toBe(201);
    const key = await server.register(`oauth-long-${process.pid}@example.com`);
    const { page, watch } = await newPage();
    await page.goto(authorization('state-long', { client_id: registered.body.client_id }).url);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Sign in to connect ${name}`);
    expect(await lookAtBothWidths(page, 'sign-in-long-name')).toEqual([]);
    await page.getByLabel('Your agent-context API key').fill(key);
    await submit(page, 'Sign in', INTERACTION);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      `${name} asks to use your agent-context account`,
    );
    expect(await lookAtBothWidths(page, 'consent-long-name')).toEqual([]);
    expect(watch.problems).toEqual([]);
  });

  it('an unknown or finished sign-in is a page that says so', async () => {
    const { page, watch } = await newPage([STATUS_4XX]);
    const response = await page.goto(`${issuer}/oauth/interaction/nonexistent`);
    expectPageHeaders(response, 400);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('This sign-in has expired');
    expect(await page.getByRole('alert').textContent()).toMatch(/longer than ten minutes/);
    expect(await lookAtBothWidths(page, 'error-expired')).toEqual([]);
    expect(watch.problems).toEqual([]);
  });

  it('a redirect URI the client did not register is a page, not a redirect', async () => {
    const { page, watch } = await newPage([STATUS_4XX]);
    const response = await page.goto(
      authorization('state-bad', { redirect_uri: 'http://127.0.0.1:9/elsewhere' }).url,
    );
    expectPageHeaders(response, 400);
    expect(page.url().startsWith(`${issuer}/oauth/authorize?`)).toBe(true);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'This authorization cannot go on',
    );
    expect(await page.getByRole('alert').textContent()).toBe(
      'The application asked for the answer to go to an address it did not register, so it is not sent.',
    );
    expect(await page.locator('.details').textContent()).toMatch(/\(invalid_redirect_uri\)$/);
    expect(await lookAtBothWidths(page, 'error-redirect-uri')).toEqual([]);
    expect(watch.problems).toEqual([]);
  });

  it('serves its style sheet from this origin', async () => {
    const res = await fetch(`${issuer}/oauth/assets/oauth.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/css/);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
