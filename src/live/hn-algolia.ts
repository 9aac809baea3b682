/**
 * News from the Hacker News Algolia API (keyless, reliable, tech only): the latest stories matching the
 * query, newest first, with clean titles and a link for every item (Ask HN items link to the discussion).
 */
import { z } from 'zod';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import type { ProviderDescriptor } from './provider-descriptor.js';
import { cleanText, httpUrl, siteName } from './text.js';

export const HN_ALGOLIA: Upstream = { id: 'hn-algolia', name: 'Hacker News Algolia', kind: 'news' };

export const HN_ALGOLIA_PROVIDER: ProviderDescriptor = {
  id: HN_ALGOLIA.id,
  serves: { news: fetchNews },
  urls: { hnAlgolia: { variable: 'AC_HN_ALGOLIA_URL', default: 'https://hn.algolia.com' } },
  perMinute: 150,
};

const HN_ITEM = 'https://news.ycombinator.com/item?id=';

const hitSchema = z.object({
  objectID: z.string(),
  title: z.string().nullish(),
  url: z.string().nullish(),
  author: z.string().nullish(),
  points: z.number().nullish(),
  num_comments: z.number().nullish(),
  created_at: z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'not a date'),
});

const searchSchema = z.object({ hits: z.array(hitSchema) });

export async function fetchNews(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<LiveResult> {
  const url = buildUrl(baseUrl(config, 'hnAlgolia', HN_ALGOLIA), '/api/v1/search_by_date', {
    query,
    tags: 'story',
    hitsPerPage: '20',
  });
  const { hits } = await http.getJson(HN_ALGOLIA, url, searchSchema, { deadline });
  const items = hits
    .map((hit) => {
      const title = cleanText(hit.title ?? '');
      const discussion = `${HN_ITEM}${encodeURIComponent(hit.objectID)}`;
      const link = httpUrl(hit.url);
      return {
        title,
        url: link ? link.href : discussion,
        published_at: new Date(hit.created_at).toISOString(),
        source: link ? siteName(link) : 'news.ycombinator.com',
        discussion_url: discussion,
        points: hit.points ?? null,
        comments: hit.num_comments ?? null,
      };
    })
    .filter((item) => item.title !== '')
    .sort((a, b) => b.published_at.localeCompare(a.published_at));
  return { source: HN_ALGOLIA.id, data: { items } };
}
