/**
 * News and web search from the Brave Search API (keyed: `X-Subscription-Token`; only successful calls are
 * billed). The chains call these only when AC_BRAVE_API_KEY is set; called without one they throw AppError
 * `internal`, a configuration mistake of this service rather than an upstream failure.
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream, upstreamLabel } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { normaliseNewsItems, normaliseWebResults } from './news-items.js';
import type { ProviderDescriptor } from './provider-descriptor.js';

export const BRAVE_NEWS: Upstream = { id: 'brave', name: 'Brave Search', kind: 'news' };
export const BRAVE_WEB: Upstream = { id: 'brave', name: 'Brave Search', kind: 'search' };

/** Keyed: it joins the news and search chains (first, by default) only when its key is set. */
export const BRAVE_PROVIDER: ProviderDescriptor = {
  id: BRAVE_NEWS.id,
  serves: { news: fetchBraveNews, search: fetchBraveWeb },
  urls: { brave: { variable: 'AC_BRAVE_URL', default: 'https://api.search.brave.com' } },
  apiKey: { variable: 'AC_BRAVE_API_KEY', requiredToJoin: true },
  perMinute: 50,
};

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
  const key = config.apiKeys?.[upstream.id];
  if (key) return key;
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
  const url = buildUrl(baseUrl(config, 'brave', BRAVE_NEWS), '/res/v1/news/search', {
    q: query,
    count: '20',
  });
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
  const url = buildUrl(baseUrl(config, 'brave', BRAVE_WEB), '/res/v1/web/search', { q: query, count: '10' });
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
