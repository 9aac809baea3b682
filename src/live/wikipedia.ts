/**
 * Encyclopedia pages from the Wikipedia REST search (keyless, but blocks calls without a User-Agent):
 * title, article URL on the configured host, and the excerpt as plain text.
 */
import { z } from 'zod';
import type { SearchResult } from './duckduckgo.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { cleanText } from './text.js';

export const WIKIPEDIA: Upstream = { id: 'wikipedia', name: 'Wikipedia', kind: 'search' };

const pageSchema = z.object({
  key: z.string().min(1),
  title: z.string(),
  excerpt: z.string().nullish(),
  description: z.string().nullish(),
});

const searchSchema = z.object({ pages: z.array(pageSchema) });

/** `AC/DC` → `https://en.wikipedia.org/wiki/AC/DC`, keeping `/`, `:` and parentheses readable. */
export function articleUrl(base: string, key: string): string {
  const path = encodeURIComponent(key).replace(/%2F/gi, '/').replace(/%3A/gi, ':');
  return `${new URL(base).origin}/wiki/${path}`;
}

export async function searchWikipedia(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<SearchResult[]> {
  const base = baseUrl(config, 'wikipedia', WIKIPEDIA);
  const url = buildUrl(base, '/w/rest.php/v1/search/page', { q: query, limit: '10' });
  const { pages } = await http.getJson(WIKIPEDIA, url, searchSchema, { deadline });
  return pages.map((page) => ({
    title: cleanText(page.title) || page.key,
    url: articleUrl(base, page.key),
    snippet: cleanText(page.excerpt ?? '') || cleanText(page.description ?? ''),
  }));
}
