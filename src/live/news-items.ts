/**
 * Normalisation shared by the news and web-search providers, so that every provider (and the chain that
 * merges them) hands agents the same contract: plain text, absolute http(s) links only, ISO UTC dates,
 * no duplicates, news newest first and web results numbered in their upstream order.
 */
import { cleanText, httpUrl, siteName } from './text.js';

/** One news item of the normalised contract `{items: NewsItem[]}`. */
export interface NewsItem {
  title: string;
  url: string;
  /** ISO 8601 UTC, or null when the upstream gives no usable date. */
  published_at: string | null;
  /** The publisher, e.g. `The Verge` or `reuters.com`. */
  source: string;
}

/** An item as a provider read it: text may hold markup and entities, the link may be anything. */
export interface RawNewsItem {
  title: string;
  url: string | null | undefined;
  published_at: string | null | undefined;
  source: string;
}

/** One web result of the normalised contract `{results: WebResult[], coverage: 'web'}`. */
export interface WebResult {
  /** 1-based, after deduplication. */
  position: number;
  title: string;
  url: string;
  snippet: string;
}

export interface RawWebResult {
  title: string;
  url: string | null | undefined;
  snippet: string;
}

/** Inline highlight tags (`<strong>Rust</strong>'s`): removed outright, where cleanText leaves a space. */
const INLINE_TAGS = /<\/?(?:strong|b|em|i|mark|span|u|small|sub|sup)\b[^>]*>/gi;

/** Plain text of an upstream title or snippet: inline tags dropped, then {@link cleanText}. */
export function plainText(text: string): string {
  return cleanText(text.replace(INLINE_TAGS, ''));
}

/** Same page despite a trailing slash, host case, a fragment or percent-encoding: one key. */
export function urlKey(url: URL): string {
  let path = url.pathname.replace(/\/+$/, '');
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep the encoded path
  }
  return `${url.host.toLowerCase()}${path}${url.search}`;
}

/** `Rust 1.91: what's new?` and `rust 1.91 — What’s new` are the same headline. */
export function titleKey(title: string): string {
  return title
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** A date string as ISO 8601 UTC, or null when it is missing or not a date. */
export function isoDate(value: string | null | undefined): string | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/**
 * Cleans, filters, deduplicates and sorts news items: titles and publishers as plain text (a missing
 * publisher becomes the link's host); items without a title or an absolute http(s) URL dropped; one item
 * per URL and per normalised title, the first in input order (so a merging caller lists its preferred
 * provider first); then newest first, undated last, input order kept among equal dates.
 */
export function normaliseNewsItems(items: readonly RawNewsItem[]): NewsItem[] {
  const urls = new Set<string>();
  const titles = new Set<string>();
  const kept: NewsItem[] = [];
  for (const item of items) {
    const url = httpUrl(item.url);
    const title = plainText(item.title);
    if (!url || !title) continue;
    const byUrl = urlKey(url);
    const byTitle = titleKey(title);
    if (urls.has(byUrl) || (byTitle !== '' && titles.has(byTitle))) continue;
    urls.add(byUrl);
    if (byTitle !== '') titles.add(byTitle);
    kept.push({
      ...item, // provider extras (points, comments, discussion_url) pass through
      title,
      url: url.href,
      published_at: isoDate(item.published_at),
      source: plainText(item.source) || siteName(url),
    });
  }
  return kept.sort((a, b) => {
    if (a.published_at === b.published_at) return 0;
    if (a.published_at === null) return 1;
    if (b.published_at === null) return -1;
    return b.published_at.localeCompare(a.published_at);
  });
}

/**
 * Cleans and numbers web results in upstream order: plain-text title and snippet, absolute http(s) URLs
 * only, each URL once (the first wins), positions 1..n assigned after deduplication. A result without a
 * title is titled by its URL.
 */
export function normaliseWebResults(results: readonly RawWebResult[]): WebResult[] {
  const seen = new Set<string>();
  const normalised: WebResult[] = [];
  for (const result of results) {
    const url = httpUrl(result.url);
    if (!url) continue;
    const key = urlKey(url);
    if (seen.has(key)) continue;
    seen.add(key);
    normalised.push({
      position: normalised.length + 1,
      title: plainText(result.title) || url.href,
      url: url.href,
      snippet: plainText(result.snippet),
    });
  }
  return normalised;
}
