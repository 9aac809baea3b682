/**
 * The API reference page (/docs) in a real Chromium: Swagger UI rendering the service's OpenAPI document
 * under the page's strict Content-Security-Policy, its try-it panel using the console's session key (or a
 * key typed into its own Authorize dialog), with no console error, failed request or other origin, and no
 * serious or critical axe-core violation, at desktop and phone widths.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  launchBrowser,
  type PageWatch,
  screenshot,
  seriousAxeViolations,
  VIEWPORTS,
  type ViewportName,
  watchPage,
} from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const SESSION_KEY = 'agent-context.key';
const TIMEOUT = 60_000;

let server: TestServer;
let browser: Browser;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = await server.register();
  browser = await launchBrowser();
}, TIMEOUT);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage(viewport: ViewportName): Promise<{ page: Page; watch: PageWatch }> {
  const context = await browser.newContext({ viewport: VIEWPORTS[viewport] });
  const page = await context.newPage();
  const watch = watchPage(page, new URL(server.url).origin);
  return { page, watch };
}

/** Opens /docs and waits until Swagger UI has rendered the operations and said which key it uses. */
async function loadDocs(page: Page): Promise<void> {
  await page.goto(`${server.url}/docs`);
  await page.locator('.opblock-summary-path[data-path="/api/ac/account"]').waitFor();
  await page.locator('#key-status').filter({ hasText: /key/u }).waitFor();
}

/** Opens GET /api/ac/account, presses "Try it out" then "Execute", as a person would. */
async function tryAccount(page: Page) {
  const block = page.locator('.opblock-get', {
    has: page.locator('.opblock-summary-path[data-path="/api/ac/account"]'),
  });
  await block.locator('.opblock-summary-control').click();
  await block.getByRole('button', { name: 'Try it out' }).click();
  const answered = page.waitForResponse(
    (res) => new URL(res.url()).pathname === '/api/ac/account' && res.request().method() === 'GET',
  );
  await block.getByRole('button', { name: 'Execute' }).click();
  const response = await answered;
  const live = block.locator('.live-responses-table');
  await live.locator('.response-col_status', { hasText: '200' }).waitFor();
  await live.locator('.response-col_description', { hasText: 'credit_balance_cents' }).waitFor();
  return { block, response };
}

describe('/docs', () => {
  it('answers with the page and its files under its own strict CSP, and 404 for anything else', async () => {
    for (const path of ['/docs', '/docs/']) {
      const res = await server.request('GET', path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/u);
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      expect(res.text).toContain('<html lang="en">');
      expect(res.text).toContain('href="/console"');
    }
    for (const [path, type] of [
      ['/docs/swagger-ui-bundle.js', /javascript/u],
      ['/docs/swagger-ui.css', /^text\/css/u],
      ['/docs/docs.js', /javascript/u],
      ['/docs/docs.css', /^text\/css/u],
    ] as const) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(type);
      expect(res.headers.get('content-security-policy'), path).toBe(CSP);
    }
    const apiCsp = (await server.request('GET', '/api/ac/ping')).headers.get('content-security-policy');
    expect(apiCsp).toMatch(/^default-src 'none';\s*frame-ancestors 'none'$/u);
    for (const path of [
      '/docs/nope.js',
      '/docs/swagger-ui.css.map',
      '/docs/%2e%2e/package.json',
      '/docs/x/',
    ]) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-security-policy'), path).toBe(apiCsp);
    }
  });

  for (const viewport of ['desktop', 'phone'] as const) {
    it(
      `renders the operations at ${viewport} width, with no problem and no serious axe violation`,
      async () => {
        const { page, watch } = await openPage(viewport);
        try {
          await loadDocs(page);
          const text = await page.locator('#swagger-ui').innerText();
          for (const summary of [
            'Store a named memory, or update it if the key exists.',
            'Show the account: e-mail, name, plan and balance.',
            'Fetch news, web search results, current weather or an asset price.',
          ]) {
            expect(text).toContain(summary);
          }
          for (const path of ['/api/ac/memory', '/api/ac/account', '/api/ac/data']) {
            expect(await page.locator(`.opblock-summary-path[data-path="${path}"]`).first().isVisible()).toBe(
              true,
            );
          }
          const consoleLink = page.getByRole('link', { name: 'Console' });
          expect(await consoleLink.isVisible()).toBe(true);
          expect(await consoleLink.getAttribute('href')).toBe('/console');
          expect(await page.locator('#key-status').innerText()).toMatch(/No API key in this tab/u);
          expect(await page.title()).toMatch(/API reference/u);
          // One main landmark: Swagger UI's own, around the operations.
          expect(await page.locator('main').count()).toBe(1);
          await screenshot(page, 'docs', viewport);
          expect(await seriousAxeViolations(page)).toEqual([]);
          expect(watch.problems).toEqual([]);
        } finally {
          await page.context().close();
        }
      },
      TIMEOUT,
    );
  }

  it(
    "tries GET /api/ac/account with the console's session key and shows the 200 answer",
    async () => {
      const { page, watch } = await openPage('desktop');
      try {
        // The console's sign-in, in this tab: the key in the origin's session storage. (Set on a page that
        // loads nothing else, so that no request of the docs page is cut off by a reload.)
        await page.goto(`${server.url}/api/ac/ping`);
        await page.evaluate(
          ([name, value]) => (globalThis as any).sessionStorage.setItem(name, value),
          [SESSION_KEY, key],
        );
        await loadDocs(page);
        expect(await page.locator('#key-status').innerText()).toMatch(/signed in with at the console/u);
        const { block, response } = await tryAccount(page);
        expect(response.status()).toBe(200);
        expect(response.request().headers()['x-api-key']).toBe(key);
        expect(await response.json()).toHaveProperty('credit_balance_cents');
        await block.scrollIntoViewIfNeeded();
        await screenshot(page, 'docs-try-it', 'desktop');
        expect(await seriousAxeViolations(page)).toEqual([]);
        // The key was only read: nothing put it in the URL or in storage that outlives the tab.
        expect(page.url()).not.toContain(key);
        expect(await page.evaluate(() => JSON.stringify((globalThis as any).localStorage))).not.toContain(
          key,
        );
        expect(watch.problems).toEqual([]);
      } finally {
        await page.context().close();
      }
    },
    TIMEOUT,
  );

  it(
    'without a session key, tries the operation with a key typed into the Authorize dialog',
    async () => {
      const { page, watch } = await openPage('desktop');
      try {
        await loadDocs(page);
        await page
          .locator('.scheme-container')
          .getByRole('button', { name: /Authorize/u })
          .click();
        const apiKeyForm = page.locator('.dialog-ux .auth-container', { hasText: 'X-API-Key' });
        await apiKeyForm.getByLabel('Value:').fill(key);
        expect(await seriousAxeViolations(page)).toEqual([]);
        await apiKeyForm.getByRole('button', { name: 'Authorize', exact: true }).click();
        await apiKeyForm.getByRole('button', { name: 'Logout' }).waitFor();
        expect(await seriousAxeViolations(page)).toEqual([]);
        await apiKeyForm.getByRole('button', { name: 'Close', exact: true }).click();
        await page.locator('.dialog-ux').waitFor({ state: 'detached' });
        const { response } = await tryAccount(page);
        expect(response.status()).toBe(200);
        expect(response.request().headers()['x-api-key']).toBe(key);
        expect(
          await page.evaluate((name) => (globalThis as any).sessionStorage.getItem(name), SESSION_KEY),
        ).toBeNull();
        expect(watch.problems).toEqual([]);
      } finally {
        await page.context().close();
      }
    },
    TIMEOUT,
  );
});
