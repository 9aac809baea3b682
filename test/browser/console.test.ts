/**
 * The web console (/console) end to end in a real Chromium against a real server: signing in with a right
 * and a wrong key, the account, memories stored through the API and found, edited, restored and deleted in
 * the browser, a live query against a fake upstream, key rotation and signing out. Every page is looked at
 * at both widths (screenshots under test-output/screenshots, axe-core), and no page may log an error, fail
 * a request or reach another origin (which is how a CSP violation shows).
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { lookAtBothWidths, type PageWatch } from '../helpers/browser.js';
import { useConsoleSuite } from './console-suite.js';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
/** How Chromium logs a fetch answered 401 (the console error a wrong or rotated key provokes). */
const STATUS_401 = /status of 401/;

describe('the web console', { timeout: 60_000 }, () => {
  const suite = useConsoleSuite({ weather: true });

  async function open(allow: RegExp[] = []): Promise<{ page: Page; watch: PageWatch }> {
    const opened = await suite.newPage(allow);
    await opened.page.goto(`${suite.server.url}/console`);
    return opened;
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
  }

  /** Follows a link of the main navigation. */
  const go = (page: Page, name: string) =>
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();

  const balanceOf = async (key: string) =>
    (await suite.server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;

  it('serves the page and its files with the console CSP, and 404 for anything else under /console', async () => {
    for (const path of ['/console', '/console/']) {
      const res = await suite.server.request('GET', path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      expect(res.text).toMatch(/<html lang="en">/);
      expect(res.text).not.toMatch(/<script>|style="/);
    }
    const html = (await suite.server.request('GET', '/console')).text;
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.some((a) => a.endsWith('.js'))).toBe(true);
    expect(assets.some((a) => a.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const res = await suite.server.request('GET', asset);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe(CSP);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const head = await suite.server.request('HEAD', '/console');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    for (const path of [
      '/console/nope.js',
      '/console/index.htm',
      '/console/a/b',
      '/console/%2e%2e/package.json',
    ]) {
      const res = await suite.server.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body?.code, path).toBe('not_found');
    }
  });

  it('a wrong key gets a clear message and is not kept', async () => {
    const { page, watch } = await open([STATUS_401]);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    // This server has no AC_ADMIN_TOKEN: no operator view is offered.
    await page.getByRole('link', { name: 'API reference' }).first().waitFor();
    expect(await page.getByRole('link', { name: 'Operator' }).count()).toBe(0);
    expect(await lookAtBothWidths(page, 'console-sign-in')).toEqual([]);
    await page.getByLabel('API key').fill('ac_this-is-not-a-key');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await expect.poll(() => alert.textContent()).toMatch(/not accepted.*Unknown API key/);
    expect(await page.evaluate("sessionStorage.getItem('agent-context.key')")).toBeNull();
    expect(await lookAtBothWidths(page, 'console-sign-in-error')).toEqual([]);
    expect(watch.problems).toEqual([]);
  });

  it('signs in, shows the balance and account, keeps the key in the tab only, and signs out', async () => {
    const email = `console-account-${process.pid}@example.com`;
    const key = await suite.server.register(email);
    const { page, watch } = await open();
    await signIn(page, key);
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('50 ¢');
    await expect.poll(() => page.locator('main').textContent()).toContain(email);
    expect(await page.evaluate("sessionStorage.getItem('agent-context.key')")).toBe(key);
    expect(await page.evaluate('[localStorage.length, document.cookie]')).toEqual([0, '']);
    expect(page.url()).not.toContain(key);
    expect(await lookAtBothWidths(page, 'console-account')).toEqual([]);

    // A reload keeps the session (sessionStorage survives it).
    await page.reload();
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('50 ¢');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/Signed out/);
    expect(watch.problems).toEqual([]);
  });

  it('finds memories stored through the API, edits, restores and deletes one in the browser', async () => {
    const key = await suite.server.register();
    const store = (memory_key: string, memory_value: string, memory_type: string) =>
      suite.server.request('POST', '/api/ac/memory', {
        key,
        body: { agent_key: key, memory_key, memory_value, memory_type, metadata: { source: 'test' } },
      });
    expect(
      (await store('deploy/apollo', 'To deploy Apollo: run the tests, tag, then push.', 'workflow')).status,
    ).toBe(200);
    expect((await store('user.timezone', 'Europe/Berlin', 'preference')).status).toBe(200);
    expect((await store('project.apollo', 'Apollo is the launch tracker.', 'fact')).status).toBe(200);

    const { page, watch } = await open();
    await signIn(page, key);
    await go(page, 'Memories');
    await page.getByRole('heading', { level: 1, name: 'Memories' }).waitFor();

    // Browse: all three, most recently updated first.
    await page.getByRole('button', { name: 'List memories' }).click();
    const list = page.getByTestId('memory-list');
    await expect
      .poll(() => list.getByRole('button').allTextContents())
      .toEqual(['project.apollo', 'user.timezone', 'deploy/apollo']);
    // Filter by type.
    await page.getByRole('checkbox', { name: 'preference' }).check();
    await page.getByRole('button', { name: 'List memories' }).click();
    await expect.poll(() => list.getByRole('button').allTextContents()).toEqual(['user.timezone']);
    await page.getByRole('checkbox', { name: 'preference' }).uncheck();
    // Search, ranked, with the matching words marked in the snippet.
    await page.getByLabel('Search text').fill('deployed');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => list.getByRole('button').allTextContents()).toEqual(['deploy/apollo']);
    expect(await list.locator('mark').first().textContent()).toBe('deploy');
    expect(await lookAtBothWidths(page, 'console-memories-search')).toEqual([]);

    // Open and edit it: a store conditional on its version.
    await list.getByRole('button', { name: 'deploy/apollo' }).click();
    await page.getByRole('heading', { level: 2, name: 'deploy/apollo' }).waitFor();
    await page.getByLabel('Value').fill('To deploy Apollo: tag, then push to main.');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/Saved .* as version 2/);
    const stored = await suite.server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'deploy/apollo' },
    });
    expect(stored.body.memory).toMatchObject({
      memory_value: 'To deploy Apollo: tag, then push to main.',
      memory_type: 'workflow',
      metadata: { source: 'test' },
      version: 2,
    });
    expect(await lookAtBothWidths(page, 'console-memory-edit')).toEqual([]);

    // History, and restore version 1.
    await page.getByRole('button', { name: 'History' }).click();
    await page.getByRole('heading', { level: 3, name: 'History' }).waitFor();
    expect(await lookAtBothWidths(page, 'console-memory-history')).toEqual([]);
    await page.getByRole('button', { name: 'Restore version 1' }).click();
    await expect
      .poll(() => page.getByRole('status').first().textContent())
      .toMatch(/Restored version 1 .* as version 3/);
    const restored = await suite.server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'deploy/apollo' },
    });
    expect(restored.body.memory).toMatchObject({
      memory_value: 'To deploy Apollo: run the tests, tag, then push.',
      version: 3,
    });
    // The form now edits the restored version.
    expect(await page.getByLabel('Value').inputValue()).toBe(
      'To deploy Apollo: run the tests, tag, then push.',
    );

    // Delete, after a confirmation (cancelled once).
    await page.getByRole('button', { name: 'Delete…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this memory?' });
    await dialog.waitFor();
    expect(await lookAtBothWidths(page, 'console-memory-delete')).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(
      (
        await suite.server.request('GET', '/api/ac/memory/history', {
          key,
          query: { agent_key: key, memory_key: 'deploy/apollo' },
        })
      ).body.current_version,
    ).toBe(3);
    await page.getByRole('button', { name: 'Delete…' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/Deleted the memory/);
    await expect.poll(() => list.getByRole('button').allTextContents()).toEqual([]);
    const gone = await suite.server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'deploy/apollo' },
    });
    expect(gone.status).toBe(404);

    // A new memory, stored from the browser.
    await page.getByRole('button', { name: 'New memory' }).click();
    await page.getByLabel('Key', { exact: true }).fill('note.console');
    await page.getByLabel('Value').fill('Written in the console.');
    await page.getByLabel('Type', { exact: true }).selectOption('fact');
    await page.getByRole('button', { name: 'Store' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/Stored the new memory/);
    const created = await suite.server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'note.console' },
    });
    expect(created.body.memory).toMatchObject({
      memory_value: 'Written in the console.',
      memory_type: 'fact',
    });
    expect(watch.problems).toEqual([]);
  });

  it('runs a live query against the fake upstream and shows source, freshness and cost', async () => {
    const key = await suite.server.register();
    const { page, watch } = await open();
    await signIn(page, key);
    await go(page, 'Live data');
    await page.getByRole('heading', { level: 1, name: 'Live data' }).waitFor();
    await page.getByLabel('Kind').selectOption('weather');
    await page.getByRole('textbox', { name: 'Query' }).fill('Paris');
    await page.getByLabel('Cache minutes').fill('0');
    await page.getByRole('button', { name: 'Run query' }).click();
    const result = page.getByTestId('live-result');
    await result.waitFor();
    expect(await page.getByTestId('live-source').textContent()).toBe('open-meteo');
    expect(await page.getByTestId('live-state').textContent()).toBe('fresh');
    expect(await page.getByTestId('live-cost').textContent()).toBe('2 ¢');
    expect(await result.textContent()).toContain('Paris');
    expect(await balanceOf(key)).toBe(48);
    expect(await lookAtBothWidths(page, 'console-live-data')).toEqual([]);

    // Again, from the cache: free.
    await page.getByLabel('Cache minutes').fill('15');
    await page.getByRole('button', { name: 'Run query' }).click();
    await expect.poll(() => page.getByTestId('live-state').textContent()).toBe('hit');
    expect(await page.getByTestId('live-cost').textContent()).toBe('0 ¢');
    expect(await balanceOf(key)).toBe(48);
    expect(watch.problems).toEqual([]);
  });

  it('rotates the key: the new one is shown once and used, the old one is refused', async () => {
    const oldKey = await suite.server.register();
    const { page, watch } = await open();
    await signIn(page, oldKey);
    await page.getByRole('button', { name: 'Rotate key…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the API key?' });
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    const field = page.getByLabel('New API key');
    await field.waitFor();
    const newKey = await field.inputValue();
    expect(newKey).toMatch(/^ac_/);
    expect(newKey).not.toBe(oldKey);
    expect(await page.evaluate("sessionStorage.getItem('agent-context.key')")).toBe(newKey);
    expect(await lookAtBothWidths(page, 'console-account-rotated')).toEqual([]);

    expect((await suite.server.request('GET', '/api/ac/account', { key: oldKey })).status).toBe(401);
    expect((await suite.server.request('GET', '/api/ac/account', { key: newKey })).status).toBe(200);

    // The console goes on with the new key, also after a reload.
    await page.reload();
    await expect.poll(() => page.getByTestId('balance').textContent()).toBe('50 ¢');
    await go(page, 'Usage');
    await page.getByTestId('ledger').waitFor();
    expect(await page.getByTestId('ledger').textContent()).toContain('starter credit');
    expect(watch.problems).toEqual([]);
  });

  it('works from the keyboard: skip link, sign in with Enter, navigation, visible focus', async () => {
    const key = await suite.server.register();
    const { page, watch } = await open();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    await page.getByLabel('API key').focus();
    // The focused field shows its focus ring.
    expect(await page.evaluate('getComputedStyle(document.activeElement).outlineStyle')).toBe('solid');
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    const memories = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Memories' });
    await memories.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Memories' }).waitFor();
    // The new page's heading takes the focus, so a screen reader announces it.
    await expect.poll(() => page.evaluate('document.activeElement.textContent')).toBe('Memories');
    expect(watch.problems).toEqual([]);
  });

  it('signs out by itself when the key stops working elsewhere', async () => {
    const key = await suite.server.register();
    const { page, watch } = await open([STATUS_401]);
    await signIn(page, key);
    await suite.server.request('POST', '/api/ac/account/rotate-key', { key });
    // The next request with the old key is refused: a request the Account page still had to make, or the
    // Usage page's. (By the address, not the link: the first may sign out before a click lands.)
    await page.evaluate("location.hash = '#/usage'");
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await page.evaluate("sessionStorage.getItem('agent-context.key')")).toBeNull();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/key was refused/);
    expect(watch.problems).toEqual([]);
  });
});
