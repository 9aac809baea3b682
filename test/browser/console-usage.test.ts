/**
 * The console's usage figures (GET /api/ac/account/usage) in a real Chromium: spend per day and per
 * operation, the live-data cache-hit rate, today's spend on the account page, and the ledger a page at a
 * time (GET /api/ac/account/transactions with next_cursor).
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { lookAtBothWidths } from '../helpers/browser.js';
import { useConsoleSuite } from './console-suite.js';

describe('the console’s usage page', { timeout: 60_000 }, () => {
  const suite = useConsoleSuite({ weather: true, env: { AC_DAILY_SPEND_LIMIT_CENTS: '40' } });

  async function signedIn(key: string): Promise<{ page: Page; problems: string[] }> {
    const { page, watch } = await suite.newPage();
    await page.goto(`${suite.server.url}/console`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    return { page, problems: watch.problems };
  }

  it('shows spend per day and per operation, the cache-hit rate, today’s spend and the ledger', async () => {
    const key = await suite.server.register();
    for (const [memory_key, memory_value] of [
      ['user.timezone', 'Europe/Berlin'],
      ['user.editor', 'vim'],
    ]) {
      const res = await suite.server.request('POST', '/api/ac/memory', {
        key,
        body: { agent_key: key, memory_key, memory_value },
      });
      expect(res.status).toBe(200);
    }
    for (const cache_minutes of [0, 15]) {
      const res = await suite.server.request('POST', '/api/ac/data', {
        key,
        body: { agent_key: key, query_type: 'weather', query: 'Paris', cache_minutes },
      });
      expect(res.status, res.text).toBe(200);
    }
    // 2 stores (2 ¢) and one fresh weather answer (2 ¢); the second answer came from the cache (free).

    const { page, problems } = await signedIn(key);
    await expect.poll(() => page.getByTestId('today-spent').textContent()).toBe('4 ¢');
    expect(await page.locator('main').textContent()).toContain('daily limit of 40 ¢');
    expect(await lookAtBothWidths(page, 'console-account-today')).toEqual([]);

    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Usage', exact: true })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
    await expect.poll(() => page.getByTestId('window-spent').textContent()).toBe('4 ¢');
    const chart = page.getByRole('img', { name: /spend per day over the last 30 days: 4 ¢ in total/ });
    expect(await chart.count()).toBe(1);
    expect(await chart.locator('rect.bar').count()).toBeGreaterThanOrEqual(30);
    const operations = page.getByRole('region', { name: 'Spend per operation' });
    expect(await operations.getByRole('row', { name: /memory store/ }).textContent()).toMatch(
      /memory store2\s*2 ¢/,
    );
    expect(await operations.getByRole('row', { name: /data/ }).textContent()).toMatch(/data1\s*2 ¢/);
    expect(await page.getByTestId('cache-hit-rate').textContent()).toBe('50 %');
    const ledger = page.getByTestId('ledger');
    await ledger.waitFor();
    const text = await ledger.textContent();
    expect(text).toContain('user.timezone');
    expect(text).toContain('weather: paris');
    expect(text).toContain('starter credit');
    expect(await lookAtBothWidths(page, 'console-usage')).toEqual([]);

    // The same figures as a table, for those who cannot see the chart.
    await page.getByText('The figures as a table').click();
    const days = page.getByRole('region', { name: 'Spend per day' });
    expect(await days.getByRole('row').count()).toBe(31);
    expect(problems).toEqual([]);
  });

  it('pages through a long ledger', async () => {
    const key = await suite.server.register();
    for (let i = 0; i < 24; i++) {
      const res = await suite.server.request('POST', '/api/ac/memory', {
        key,
        body: { agent_key: key, memory_key: `note.${String(i).padStart(2, '0')}`, memory_value: `note ${i}` },
      });
      expect(res.status).toBe(200);
    }
    // 25 entries: the starter credit and 24 stores.
    const { page, problems } = await signedIn(key);
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Usage', exact: true })
      .click();
    const rows = page.getByTestId('ledger').locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(20);
    expect(await rows.first().textContent()).toContain('note.23');
    const pager = page.getByRole('navigation', { name: 'Ledger pages' });
    await pager.getByRole('button', { name: 'Next →' }).click();
    await expect.poll(() => rows.count()).toBe(5);
    expect(await rows.last().textContent()).toContain('starter credit');
    expect(await pager.getByRole('button', { name: 'Next →' }).isDisabled()).toBe(true);
    await pager.getByRole('button', { name: '← Previous' }).click();
    await expect.poll(() => rows.count()).toBe(20);
    expect(await rows.first().textContent()).toContain('note.23');
    expect(problems).toEqual([]);
  });
});
