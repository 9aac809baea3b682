/**
 * News from the Google News RSS search (keyless, undocumented, widest coverage): the items of the feed,
 * each headline without its " - Publisher" suffix, the publisher from `<source>`, newest first. Links are
 * Google redirect URLs. Google answers bursty or cloud traffic with an HTML page: that, and any body that
 * is not an RSS feed, is a failure, never an empty list.
 */
import { XMLParser } from 'fast-xml-parser';
import { z } from 'zod';
import type { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, softFailure, type Upstream } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { normaliseNewsItems } from './news-items.js';
import type { ProviderDescriptor } from './provider-descriptor.js';
import { cleanText, httpUrl, siteName } from './text.js';

export const GOOGLE_NEWS: Upstream = { id: 'google-news', name: 'Google News', kind: 'news' };

export const GOOGLE_NEWS_PROVIDER: ProviderDescriptor = {
  id: GOOGLE_NEWS.id,
  serves: { news: fetchGoogleNews },
  urls: { googleNews: { variable: 'AC_GOOGLE_NEWS_URL', default: 'https://news.google.com' } },
  perMinute: 20,
};

const RSS_TYPES = ['application/rss+xml', 'application/xml', 'text/xml'];

// Values stay strings (a headline "1984" is not a number); entities are left for cleanText to decode once,
// and DOCTYPE entities are never expanded.
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  isArray: (_name, path) => path === 'rss.channel.item',
});

const textSchema = z.string().optional();

const sourceSchema = z
  .union([z.string(), z.object({ '#text': textSchema, '@_url': textSchema })])
  .optional()
  .transform((value) => (typeof value === 'object' ? value : { '#text': value, '@_url': undefined }));

const itemSchema = z.object({
  title: textSchema,
  link: textSchema,
  pubDate: textSchema,
  source: sourceSchema,
});

const feedSchema = z.object({
  rss: z.object({ channel: z.object({ item: z.array(itemSchema).optional() }) }),
});

type FeedItem = z.infer<typeof itemSchema>;

/** `Headline - The Verge` → headline `Headline`, publisher `The Verge` (from `<source>` when given). */
export function splitHeadline(item: FeedItem): { title: string; publisher: string } {
  const raw = item.title ?? '';
  const named = cleanText(item.source['#text'] ?? '');
  const dash = raw.lastIndexOf(' - ');
  const suffix = dash > 0 ? cleanText(raw.slice(dash + 3)) : '';
  if (suffix && (suffix === named || !named)) return { title: raw.slice(0, dash), publisher: suffix };
  const site = httpUrl(item.source['@_url']);
  return { title: raw, publisher: named || (site ? siteName(site) : '') };
}

function notRss(cause: unknown): AppError {
  return softFailure(GOOGLE_NEWS, 'with something that is not an RSS feed', cause);
}

/** The feed's items, or AppError `upstream_failed` for malformed XML or a document that is not RSS. */
export function parseFeed(xml: string): FeedItem[] {
  let document: unknown;
  try {
    document = parser.parse(xml, true);
  } catch (err) {
    throw notRss(err);
  }
  const feed = feedSchema.safeParse(document);
  if (!feed.success) throw notRss(feed.error);
  return feed.data.rss.channel.item ?? [];
}

export async function fetchGoogleNews(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<LiveResult> {
  const url = buildUrl(baseUrl(config, 'googleNews', GOOGLE_NEWS), '/rss/search', {
    q: query,
    hl: 'en-US',
    gl: 'US',
    ceid: 'US:en',
  });
  const xml = await http.getText(GOOGLE_NEWS, url, {
    accept: 'application/rss+xml, application/xml;q=0.9, text/xml;q=0.8',
    contentTypes: RSS_TYPES,
    deadline,
  });
  const items = parseFeed(xml).map((item) => {
    const { title, publisher } = splitHeadline(item);
    return { title, url: item.link, published_at: item.pubDate, source: publisher };
  });
  return { source: GOOGLE_NEWS.id, data: { items: normaliseNewsItems(items) } };
}
