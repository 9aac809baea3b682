/**
 * "Reference" search: DuckDuckGo Instant Answer and Wikipedia, asked together. Neither is web search, so
 * results say `coverage: "reference"`. One of the two failing is fine; both failing fails the provider.
 * In the search chain the pair is one provider, `duckduckgo`, with both base URLs.
 */
import { AppError, type ErrorDetails } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { DUCKDUCKGO, type SearchResult, searchDuckDuckGo } from './duckduckgo.js';
import type { HttpClient } from './http-client.js';
import type { LiveConfig } from './live-config.js';
import type { ProviderDescriptor } from './provider-descriptor.js';
import { searchWikipedia } from './wikipedia.js';

export const DUCKDUCKGO_PROVIDER: ProviderDescriptor = {
  id: DUCKDUCKGO.id,
  serves: { search: searchReference },
  urls: {
    duckduckgo: { variable: 'AC_DUCKDUCKGO_URL', default: 'https://api.duckduckgo.com' },
    wikipedia: { variable: 'AC_WIKIPEDIA_URL', default: 'https://en.wikipedia.org' },
  },
  perMinute: 60,
};

/** DuckDuckGo Instant Answer and Wikipedia together: reference coverage, not web search. */
export async function searchReference(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline: number,
): Promise<LiveResult> {
  return mergeReferenceResults(
    await Promise.allSettled([
      searchDuckDuckGo(http, config, query, deadline),
      searchWikipedia(http, config, query, deadline),
    ]),
  );
}

/** Same page despite a trailing slash, host case or percent-encoding: one result. */
function dedupeKey(url: string): string {
  const parsed = new URL(url);
  let path = parsed.pathname.replace(/\/+$/, '');
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep the encoded path
  }
  return `${parsed.host.toLowerCase()}${path}${parsed.search}`;
}

/** DDG abstract and related topics first, then Wikipedia pages, each URL once. */
export function mergeResults(...lists: SearchResult[][]): SearchResult[] {
  const seen = new Set<string>();
  const merged: SearchResult[] = [];
  for (const result of lists.flat()) {
    const key = dedupeKey(result.url);
    if (seen.has(key)) continue;
    seen.add(key);
    merged.push(result);
  }
  return merged;
}

function withPositions(results: SearchResult[]) {
  return results.map((result, i) => ({ position: i + 1, ...result }));
}

export function mergeReferenceResults([ddg, wiki]: PromiseSettledResult<SearchResult[]>[]): LiveResult {
  const answered = [ddg, wiki].filter(
    (r): r is PromiseFulfilledResult<SearchResult[]> => r?.status === 'fulfilled',
  );
  if (answered.length === 0) throw bothFailed(ddg, wiki);
  const source =
    answered.length === 2 ? 'duckduckgo+wikipedia' : ddg?.status === 'fulfilled' ? 'duckduckgo' : 'wikipedia';
  const results = mergeResults(...answered.map((r) => r.value));
  return { source, data: { results: withPositions(results), coverage: 'reference' } };
}

function bothFailed(...outcomes: (PromiseSettledResult<unknown> | undefined)[]): AppError {
  const reasons = outcomes.map((o) => (o?.status === 'rejected' ? o.reason : undefined));
  const errors = reasons.map((reason) => (reason instanceof AppError ? reason : undefined));
  const allTimedOut = errors.every((err) => err?.code === 'upstream_timeout');
  const details: ErrorDetails = { source: 'duckduckgo+wikipedia' };
  const waits = errors
    .map((err) => err?.details.retry_after_s)
    .filter((s): s is number => typeof s === 'number');
  if (waits.length > 0) details.retry_after_s = Math.min(...waits);
  const cause = new AggregateError(reasons, 'Both reference search upstreams failed');
  return allTimedOut
    ? new AppError(
        'upstream_timeout',
        'Neither search upstream (DuckDuckGo, Wikipedia) answered in time; nothing was charged, try again later.',
        details,
        cause,
      )
    : new AppError(
        'upstream_failed',
        'Both search upstreams (DuckDuckGo and Wikipedia) failed; nothing was charged, try again later.',
        details,
        cause,
      );
}
