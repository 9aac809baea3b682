/** Shared test helpers for the live providers: a LiveConfig pointing at fakes, and catching AppErrors. */
import { expect } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { LiveConfig } from '../../src/live/live-config.js';
import { PROVIDERS } from '../../src/live/provider-list.js';

export const USER_AGENT = 'agent-context-test/1.0 (+https://example.test; ops@example.test)';

/**
 * Every base URL a provider declares with a default points at a port nothing should be called on; tests
 * override the ones they serve. (A URL without a default, SearXNG's, stays unset unless given.)
 */
export function liveConfig(urls: LiveConfig['urls'], extra: Partial<LiveConfig> = {}): LiveConfig {
  const unused = 'http://127.0.0.1:9';
  return {
    userAgent: USER_AGENT,
    timeoutMs: 2000,
    retry: { backoffBaseMs: 1, backoffMaxMs: 5 },
    // One provider per type unless a test asks for a chain, so that a provider's own failures show.
    providers: {
      weather: ['open-meteo'],
      price: ['frankfurter', 'coingecko'],
      news: ['hn-algolia'],
      search: ['duckduckgo'],
      geocoding: ['open-meteo'],
    },
    urls: {
      ...Object.fromEntries(
        PROVIDERS.flatMap((provider) =>
          Object.entries(provider.urls)
            .filter(([, url]) => url.default !== undefined)
            .map(([key]) => [key, unused]),
        ),
      ),
      ...urls,
    },
    ...extra,
  };
}

/** The AppError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function appErrorOf(promise: Promise<unknown>): Promise<AppError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(AppError);
  const err = outcome.error as AppError;
  // One sentence for an agent: no stack, no URL.
  expect(err.message).not.toMatch(/\n|\bat .+:\d+|https?:\/\//);
  return err;
}
