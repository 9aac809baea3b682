/**
 * Which Chromium the browser tests drive: the one `@sparticuz/chromium` ships (unpacked by
 * test/chromium-setup.ts), unless AC_CHROMIUM names another, and playwright-core is the release made for
 * that Chromium (a version bump of one without the other fails here).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chromiumToLaunch, launchBrowser } from '../helpers/browser.js';

const require = createRequire(import.meta.url);
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const major = (version: string) => version.split('.')[0];

const sparticuz: string = readJson(
  path.join(path.dirname(require.resolve('@sparticuz/chromium')), '..', 'package.json'),
).version;

describe('the browser tests’ Chromium', () => {
  it('playwright-core is the release made for the Chromium that @sparticuz/chromium ships', () => {
    const browsers = readJson(
      path.join(path.dirname(require.resolve('playwright-core/package.json')), 'browsers.json'),
    ).browsers as { name: string; browserVersion: string }[];
    const built = browsers.find((browser) => browser.name === 'chromium')?.browserVersion as string;
    expect(major(built)).toBe(major(sparticuz));
  });

  it('is npm’s, unpacked into the temporary directory once, unless AC_CHROMIUM names another', async () => {
    const { executablePath, unavailable } = chromiumToLaunch();
    expect(unavailable).toBeUndefined();
    if (process.env.AC_CHROMIUM) {
      expect(executablePath).toBe(process.env.AC_CHROMIUM);
      return;
    }
    expect(executablePath).toMatch(new RegExp(`/ac-chromium-${sparticuz.replaceAll('.', '\\.')}/chromium$`));
    const browser = await launchBrowser();
    try {
      expect(major(browser.version())).toBe(major(sparticuz));
    } finally {
      await browser.close();
    }
  }, 60_000);
});
