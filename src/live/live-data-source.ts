/**
 * The composition of the upstream providers behind the core's LiveDataSource port: one shared HTTP client,
 * dispatch by query type, the fiat/crypto split for prices, and the DuckDuckGo + Wikipedia merge for search.
 */
import { AppError, type ErrorDetails } from '../core/errors.js';
import type { LiveDataSource, LiveResult } from '../core/live-port.js';
import type { QueryType } from '../core/model.js';
import { fetchCryptoPrice } from './coingecko.js';
import { DUCKDUCKGO, type SearchResult, searchDuckDuckGo } from './duckduckgo.js';
import { fetchFiatPrice } from './frankfurter.js';
import { fetchNews } from './hn-algolia.js';
import { createHttpClient, type HttpClient } from './http-client.js';
import type { LiveConfig } from './live-config.js';
import { fetchWeather } from './open-meteo.js';
import { parsePriceQuery } from './price-query.js';
import { searchWikipedia, WIKIPEDIA } from './wikipedia.js';

export function createLiveDataSource(config: LiveConfig): LiveDataSource {
  const http = createHttpClient({
    userAgent: config.userAgent,
    timeoutMs: config.timeoutMs,
    ...config.retry,
  });
  return {
    async fetch(type: QueryType, query: string): Promise<LiveResult> {
      switch (type) {
        case 'weather':
          return fetchWeather(http, config, query);
        case 'price':
          return fetchPrice(http, config, query);
        case 'news':
          return fetchNews(http, config, query);
        case 'search':
          return fetchSearch(http, config, query);
        default: {
          const unknown: never = type;
          throw new AppError('internal', `Unknown live data type "${String(unknown)}".`);
        }
      }
    },
  };
}

async function fetchPrice(http: HttpClient, config: LiveConfig, query: string): Promise<LiveResult> {
  const parsed = parsePriceQuery(query);
  return parsed.kind === 'fiat'
    ? fetchFiatPrice(http, config, parsed)
    : fetchCryptoPrice(http, config, parsed);
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

async function fetchSearch(http: HttpClient, config: LiveConfig, query: string): Promise<LiveResult> {
  const [ddg, wiki] = await Promise.allSettled([
    searchDuckDuckGo(http, config, query),
    searchWikipedia(http, config, query),
  ]);
  if (ddg.status === 'fulfilled' && wiki.status === 'fulfilled') {
    return { source: 'duckduckgo+wikipedia', data: { results: mergeResults(ddg.value, wiki.value) } };
  }
  if (ddg.status === 'fulfilled')
    return { source: DUCKDUCKGO.id, data: { results: mergeResults(ddg.value) } };
  if (wiki.status === 'fulfilled')
    return { source: WIKIPEDIA.id, data: { results: mergeResults(wiki.value) } };
  throw bothFailed(ddg.reason, wiki.reason);
}

function bothFailed(...reasons: unknown[]): AppError {
  const errors = reasons.map((reason) => (reason instanceof AppError ? reason : undefined));
  const allTimedOut = errors.every((err) => err?.code === 'upstream_timeout');
  const details: ErrorDetails = { source: 'duckduckgo+wikipedia' };
  const waits = errors
    .map((err) => err?.details.retry_after_s)
    .filter((s): s is number => typeof s === 'number');
  if (waits.length > 0) details.retry_after_s = Math.min(...waits);
  const cause = new AggregateError(reasons, 'Both search upstreams failed');
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
