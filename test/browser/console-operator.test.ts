/**
 * The console's operator view in a real Chromium, on a server with AC_ADMIN_TOKEN: offered because ping
 * says `admin_api: true`, signed in with the token (a wrong one is refused with the API's sentence),
 * accounts with balances and plans, a top-up and a plan change, and the providers' and cache's status.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { lookAtBothWidths } from '../helpers/browser.js';
import { useConsoleSuite } from './console-suite.js';

const TOKEN = 'console-operator-token-0123456789';

describe('the console’s operator view', { timeout: 60_000 }, () => {
  const suite = useConsoleSuite({ env: { AC_ADMIN_TOKEN: TOKEN } });
  const emails = ['ada@example.com', 'grace@example.com', 'linus@example.org'];

  beforeAll(async () => {
    for (const email of emails) await suite.server.register(email);
  });

  async function openOperator(allow: RegExp[] = []): Promise<{ page: Page; problems: string[] }> {
    const { page, watch } = await suite.newPage(allow);
    await page.goto(`${suite.server.url}/console`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Operator' }).click();
    await page.getByRole('heading', { level: 1, name: 'Operator' }).waitFor();
    return { page, problems: watch.problems };
  }

  const accountOf = async (email: string) => {
    const res = await suite.server.request('GET', '/api/ac/admin/accounts', {
      bearer: TOKEN,
      query: { email },
    });
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
