/**
 * The console's operator view in a real Chromium, on a server with AC_ADMIN_TOKEN: offered because ping
 * says `admin_api: true`, signed in with the token (a wrong one is refused with the API's sentence),
 * accounts with balances and plans, a top-up and a plan change, and the providers' and cache's status.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, lookAtBothWidths, VIEWPORTS, watchPage } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const TOKEN = 'console-operator-token-0123456789';

describe('the console’s operator view', { timeout: 60_000 }, () => {
  let browser: Browser;
  let server: TestServer;
  let context: BrowserContext | undefined;
  const emails = ['ada@example.com', 'grace@example.com', 'linus@example.org'];

  beforeAll(async () => {
    browser = await launchBrowser();
    server = await startTestServer({ env: { AC_ADMIN_TOKEN: TOKEN } });
    for (const email of emails) await server.register(email);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
  });

  async function openOperator(allow: RegExp[] = []): Promise<{ page: Page; problems: string[] }> {
    context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    const page = await context.newPage();
    const { problems } = watchPage(page, server.url, allow);
    await page.goto(`${server.url}/console`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Operator' }).click();
    await page.getByRole('heading', { level: 1, name: 'Operator' }).waitFor();
    return { page, problems };
  }

  const accountOf = async (email: string) => {
    const res = await server.request('GET', '/api/ac/admin/accounts', { bearer: TOKEN, query: { email } });
    return res.body.accounts.find((a: { email: string }) => a.email === email);
  };

  it('refuses a wrong token with a clear message', async () => {
    const { page, problems } = await openOperator([/status of 401/]);
    expect(await lookAtBothWidths(page, 'console-operator-sign-in')).toEqual([]);
    await page.getByLabel('Admin token').fill('not-the-token-at-all');
    await page.getByRole('button', { name: 'Sign in as operator' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/AC_ADMIN_TOKEN/);
    expect(await page.evaluate("sessionStorage.getItem('agent-context.admin-token')")).toBeNull();
    expect(problems).toEqual([]);
  });

  it('lists accounts, tops one up, changes a plan and shows the providers and the cache', async () => {
    const { page, problems } = await openOperator();
    await page.getByLabel('Admin token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in as operator' }).click();
    const accounts = page.getByTestId('accounts');
    await accounts.waitFor();
    expect(await page.evaluate("sessionStorage.getItem('agent-context.admin-token')")).toBe(TOKEN);
    for (const email of emails) {
      await expect
        .poll(() => accounts.getByRole('row', { name: new RegExp(email) }).textContent())
        .toMatch(/50 ¢/);
    }
    await page.getByTestId('providers').waitFor();
    expect(await page.getByTestId('providers').locator('tbody tr').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('cache-rate').isVisible()).toBe(true);
    expect(await lookAtBothWidths(page, 'console-operator')).toEqual([]);

    // Filter by a part of the e-mail.
    await page.getByLabel('E-mail contains').fill('example.org');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect.poll(() => accounts.locator('tbody tr').count()).toBe(1);

    // Top up, from the account's row.
    await accounts.getByRole('button', { name: 'Manage linus@example.org' }).click();
    expect(await page.getByLabel('E-mail', { exact: true }).first().inputValue()).toBe('linus@example.org');
    await page.getByLabel('Cents to add').fill('250');
    await page.getByRole('button', { name: 'Add credit' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/balance is now 300 ¢/);
    expect((await accountOf('linus@example.org')).credit_balance_cents).toBe(300);
    await expect.poll(() => accounts.getByRole('row', { name: /linus/ }).textContent()).toMatch(/300 ¢/);

    // Change the plan.
    await page.getByLabel('Plan', { exact: true }).selectOption('unlimited');
    await page.getByRole('button', { name: 'Change plan' }).click();
    await expect
      .poll(() => page.getByRole('status').first().textContent())
      .toMatch(/moved from pay-as-you-go to unlimited/);
    expect((await accountOf('linus@example.org')).plan).toBe('unlimited');
    await expect.poll(() => accounts.getByRole('row', { name: /linus/ }).textContent()).toMatch(/unlimited/);

    // Leaving the operator view forgets the token.
    await page.getByRole('button', { name: 'Leave the operator view' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await page.evaluate("sessionStorage.getItem('agent-context.admin-token')")).toBeNull();
    expect(problems).toEqual([]);
  });
});
