/**
 * News and web search from the Brave Search API (keyed: `X-Subscription-Token`; only successful calls are
 * billed). The chains call these only when `braveApiKey` is set; called without one they throw AppError
 * `internal`, a configuration mistake of this service rather than an upstream failure.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream, upstreamLabel } from './http-client.js';
import type { LiveConfig } from './live-config.js';
import { normaliseNewsItems, normaliseWebResults } from './news-items.js';

export const BRAVE_NEWS: Upstream = { id: 'brave', name: 'Brave Search', kind: 'news' };
export const BRAVE_WEB: Upstream = { id: 'brave', name: 'Brave Search', kind: 'search' };

const newsResultSchema = z.object({
  title: z.string(),
  url: z.string(),
  page_age: z.string().nullish(),
  meta_url: z.object({ hostname: z.string().nullish() }).nullish(),
});

const newsSchema = z.object({ results: z.array(newsResultSchema) });

const webResultSchema = z.object({
  title: z.string(),
  url: z.string(),
  description: z.string().nullish(),
});

/** Brave leaves out `web` when nothing matches. */
const webSchema = z.object({ web: z.object({ results: z.array(webResultSchema) }).optional() });

/** Brave's `page_age` (`2026-11-20T10:00:00`, no zone) is UTC. */
export function braveDate(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  return /(Z|[+-]\d{2}:?\d{2})$/i.test(value) ? value : `${value}Z`;
}

/** The key, or AppError `internal`: the chain must not put Brave in a chain without one. */
function apiKey(config: LiveConfig, upstream: Upstream): string {
  if (config.braveApiKey) return config.braveApiKey;
  throw new AppError(
    'internal',
    `${upstreamLabel(upstream)} is not configured on this service; nothing was charged.`,
    { source: upstream.id },
  );
}

function call(upstream: Upstream, key: string, deadline: number | undefined) {
  return {
    headers: { 'X-Subscription-Token': key },
    deadline,
    onStatus: (status: number) =>
      status === 401 || status === 403
        ? new AppError(
            'upstream_failed',
            `${upstreamLabel(upstream)} rejected this service's API key (HTTP ${status}); nothing was charged.`,
            { source: upstream.id, upstream_status: status },
          )
        : undefined,
  };
}

export async function fetchBraveNews(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<LiveResult> {
  const key = apiKey(config, BRAVE_NEWS);
  const url = buildUrl(config.urls.brave, '/res/v1/news/search', { q: query, count: '20' });
  const { results } = await http.getJson(BRAVE_NEWS, url, newsSchema, call(BRAVE_NEWS, key, deadline));
  const items = results.map((result) => ({
    title: result.title,
    url: result.url,
    published_at: braveDate(result.page_age),
    source: result.meta_url?.hostname?.replace(/^www\./, '') ?? '',
  }));
  return { source: BRAVE_NEWS.id, data: { items: normaliseNewsItems(items) } };
}

export async function fetchBraveWeb(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<LiveResult> {
  const key = apiKey(config, BRAVE_WEB);
  const url = buildUrl(config.urls.brave, '/res/v1/web/search', { q: query, count: '10' });
  const { web } = await http.getJson(BRAVE_WEB, url, webSchema, call(BRAVE_WEB, key, deadline));
  const results = normaliseWebResults(
    (web?.results ?? []).map((result) => ({
      title: result.title,
      url: result.url,
      snippet: result.description ?? '',
    })),
  );
  return { source: BRAVE_WEB.id, data: { results, coverage: 'web' } };
}
