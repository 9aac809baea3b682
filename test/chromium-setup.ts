/**
 * The browser tests' Chromium, once for the whole vitest run (test/helpers/npm-chromium.ts): AC_CHROMIUM,
 * else the npm package's, unpacked the first time. Handed to test files by `provide('chromium', ...)`;
 * test/helpers/browser.ts launches it. A failure is handed over too, and fails only the browser tests.
 */
import type { TestProject } from 'vitest/node';
import { prepareChromium } from './helpers/npm-chromium.js'; // declares provide('chromium', ...)

export default async function setup(project: TestProject): Promise<void> {
  project.provide('chromium', await prepareChromium());
}
