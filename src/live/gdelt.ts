/**
 * News from the GDELT DOC 2.0 API (keyless, worldwide, asks for at most one request per 5 s per IP, often
 * slow): the articles GDELT saw in the last day matching the query, newest first, the publisher being the
 * article's domain. GDELT reports problems ("Please limit requests…", "Your search contained…") as plain
 * text with status 200 or 429; the shared client turns those into `upstream_failed`, never an empty list.
 */
import { z } from 'zod';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { normaliseNewsItems } from './news-items.js';
import type { ProviderDescriptor } from './provider-descriptor.js';

export const GDELT: Upstream = { id: 'gdelt', name: 'GDELT', kind: 'news' };

export const GDELT_PROVIDER: ProviderDescriptor = {
  id: GDELT.id,
  serves: { news: fetchGdeltNews },
  urls: { gdelt: { variable: 'AC_GDELT_URL', default: 'https://api.gdeltproject.org' } },
  perMinute: 10,
};

const articleSchema = z.object({
  url: z.string(),
  title: z.string().nullish(),
  seendate: z.string().nullish(),
  domain: z.string().nullish(),
  language: z.string().nullish(),
  sourcecountry: z.string().nullish(),
});

/** GDELT answers `{}` when nothing matches. */
const artlistSchema = z.object({ articles: z.array(articleSchema).optional() });

/** `20261120T100000Z` → `2026-11-20T10:00:00.000Z`; undefined when it is not that format or not a date. */
export function gdeltDate(value: string | null | undefined): string | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value ?? '');
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match;
  const iso = `${year}-${month}-${day}T${hour}:${minute}:${second}.000Z`;
  const ms = Date.parse(iso);
  // Date.parse accepts 2026-02-31 and rolls it over: only a date that reads back the same is one.
  return !Number.isNaN(ms) && new Date(ms).toISOString() === iso ? iso : undefined;
}

export async function fetchGdeltNews(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<LiveResult> {
  const url = buildUrl(baseUrl(config, 'gdelt', GDELT), '/api/v2/doc/doc', {
    query,
    mode: 'artlist',
    format: 'json',
    maxrecords: '25',
    timespan: '1d',
    sort: 'datedesc',
  });
  const { articles = [] } = await http.getJson(GDELT, url, artlistSchema, { deadline });
  const items = articles.map((article) => ({
    title: article.title ?? '',
    url: article.url,
    published_at: gdeltDate(article.seendate),
    source: article.domain ?? '',
  }));
  return { source: GDELT.id, data: { items: normaliseNewsItems(items) } };
}
