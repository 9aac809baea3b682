/**
 * The set-up the console's browser tests share: one Chromium and one real server per file (with a fake
 * Open-Meteo upstream for the live-data pages when asked), and a fresh desktop browser context per page,
 * closed after each test.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../fakes/fake-upstream.js';
import { FORECAST_PARIS, GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { launchBrowser, type PageWatch, VIEWPORTS, watchPage } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

export interface ConsoleSuite {
  /** The running server (inside a test or a later hook). */
  readonly server: TestServer;
  /** A new page of a fresh desktop context, watched; `allow` lets through console errors a test provokes. */
  newPage(allow?: RegExp[]): Promise<{ page: Page; watch: PageWatch }>;
}

export function useConsoleSuite(
  options: { env?: Record<string, string>; weather?: boolean } = {},
): ConsoleSuite {
  let browser: Browser | undefined;
  let upstream: FakeUpstream | undefined;
  let server: TestServer | undefined;
  let context: BrowserContext | undefined;

  beforeAll(async () => {
    [browser, upstream] = await Promise.all([
      launchBrowser(),
      options.weather
        ? startFakeUpstream({
            '/v1/search': (req) =>
              req.query.name === 'paris' ? { json: GEOCODING_PARIS } : { json: { generationtime_ms: 1 } },
            '/v1/forecast': { json: FORECAST_PARIS },
          })
        : undefined,
    ]);
    server = await startTestServer({
      env: {
        ...(upstream
          ? {
              AC_OPEN_METEO_GEOCODING_URL: upstream.url,
              AC_OPEN_METEO_FORECAST_URL: `${upstream.url}/ignored/path`,
              AC_WEATHER_PROVIDERS: 'open-meteo',
            }
          : {}),
        ...options.env,
      },
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await upstream?.close();
  });
  afterEach(async () => {
    await context?.close();
    context = undefined;
  });

  return {
    get server(): TestServer {
      if (!server) throw new Error('useConsoleSuite: the server is not running (use it inside a test)');
      return server;
    },
    async newPage(allow: RegExp[] = []) {
      if (!browser || !server) throw new Error('useConsoleSuite: not started (use it inside a test)');
      context = await browser.newContext({ viewport: VIEWPORTS.desktop });
      const page = await context.newPage();
      return { page, watch: watchPage(page, server.url, allow) };
    },
  };
}
