/**
 * A real Chromium for browser tests, driven by playwright-core (Playwright's own browser download cannot work
 * here): by default the one the devDependency `@sparticuz/chromium` ships, unpacked once per machine by the
 * vitest globalSetup test/chromium-setup.ts (test/helpers/npm-chromium.ts); AC_CHROMIUM points at another
 * (a system Chromium or Chrome). Pages are watched for what a strict Content-Security-Policy or a broken
 * front end shows: console errors, uncaught exceptions, failed or blocked requests, and any request to
 * another origin. axe-core checks accessibility.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { inject } from 'vitest';
import type { ProvidedChromium } from './npm-chromium.js';

/**
 * The flags these machines need: --no-sandbox (the tests run as root, where Chromium's sandbox refuses to
 * start), --disable-gpu (there is none), and no connection of Chromium's own (background networking,
 * component updates, sync, QUIC, the first-run checks): the machines' network is closed, and a test page
 * must be the only thing the browser talks to.
 */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
];

/** The Chromium this run launches: AC_CHROMIUM, else the one test/chromium-setup.ts provided. */
export function chromiumToLaunch(): ProvidedChromium {
  if (process.env.AC_CHROMIUM) return { executablePath: process.env.AC_CHROMIUM };
  return (
    inject('chromium') ?? {
      unavailable:
        'No Chromium was provided to this test: run it through vitest.config.ts, whose globalSetup ' +
        'test/chromium-setup.ts prepares one, or set AC_CHROMIUM.',
    }
  );
}

/** The two widths every page is looked at: a desktop window and a phone. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 900 },
  phone: { width: 390, height: 844 },
} as const;
export type ViewportName = keyof typeof VIEWPORTS;

/** Where screenshots go, for a person to review (not in git). */
export const SCREENSHOT_DIR = path.resolve('test-output', 'screenshots');

export async function launchBrowser(): Promise<Browser> {
  const { executablePath, libraryPath, unavailable } = chromiumToLaunch();
  if (executablePath === undefined) throw new Error(unavailable);
  return chromium.launch({
    executablePath,
    args: ARGS,
    ...(libraryPath ? { env: { ...process.env, LD_LIBRARY_PATH: libraryPath } } : {}),
  });
}

export interface PageWatch {
  /** Everything that went wrong on the page so far, one sentence each. */
  readonly problems: string[];
}

/**
 * Records console errors, uncaught exceptions, requests that failed or were blocked (a CSP violation shows
 * as both a console error and a failed request), and requests to any origin but `origin`. Responses with an
 * error status are the API's business and not recorded, except a console error they cause; `allowConsole`
 * lets through console errors a test provokes on purpose (Chromium logs every 4xx fetch as one).
 */
export function watchPage(page: Page, origin: string, allowConsole: RegExp[] = []): PageWatch {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const text = message.text();
    if (allowConsole.some((pattern) => pattern.test(text))) return;
    problems.push(`console error: ${text}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('requestfailed', (request) => {
    // A request cut off by the page's own navigation (a reload, a sign-out) is not a fault of the page; a
    // request the CSP blocks fails otherwise (ERR_BLOCKED_BY_*) and logs a console error as well.
    if (request.failure()?.errorText === 'net::ERR_ABORTED') return;
    problems.push(`request failed: ${request.url()} (${request.failure()?.errorText ?? 'unknown'})`);
  });
  page.on('request', (request) => {
    const url = request.url();
    if (url.startsWith('data:') || url.startsWith('blob:')) return;
    if (new URL(url).origin !== origin) problems.push(`request to another origin: ${url}`);
  });
  return { problems };
}

const AXE_SOURCE = readFileSync(path.resolve('node_modules/axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, which a CSP does not block) and
 * returns the violations of serious or critical impact.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const page = globalThis as any;
    const result = await page.axe.run(page.document, { resultTypes: ['violations'] });
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n: any) => n.target.join(' ')),
    }));
  });
  return (violations as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A full-page screenshot under test-output/screenshots/<name>-<viewport>.png. */
export async function screenshot(page: Page, name: string, viewport: ViewportName): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}-${viewport}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Looks at a page at both widths: a screenshot at each (`<name>-desktop.png`, `<name>-phone.png`), and the
 * serious axe violations at each, plus a `page-overflow` one when the page is wider than the window (it
 * would scroll sideways), returned together (expected `[]`). Leaves the page at the desktop width.
 */
export async function lookAtBothWidths(page: Page, name: string): Promise<AxeViolation[]> {
  const violations: AxeViolation[] = [];
  for (const viewport of ['desktop', 'phone'] as const) {
    await page.setViewportSize(VIEWPORTS[viewport]);
    // Let layout and any resize-driven drawing (charts) settle before looking.
    await page.evaluate(
      'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))',
    );
    await screenshot(page, name, viewport);
    const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    if (width > VIEWPORTS[viewport].width) {
      violations.push({
        id: 'page-overflow',
        impact: 'serious',
        help: `${viewport}: the page is ${width}px wide, wider than the window (${VIEWPORTS[viewport].width}px)`,
        nodes: [],
      });
    }
    for (const v of await seriousAxeViolations(page))
      violations.push({ ...v, help: `${viewport}: ${v.help}` });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
  return violations;
}
