import { describe, expect, it } from 'vitest';
import { fetchGoogleNews, parseFeed, splitHeadline } from '../../src/live/google-news.js';
import { httpClientFor } from '../../src/live/live-data-source.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import {
  GOOGLE_NEWS_EMPTY,
  GOOGLE_NEWS_PATH,
  GOOGLE_NEWS_RUST,
  GOOGLE_SORRY_PAGE,
} from '../fixtures/live/google-news.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

const XML = 'application/xml; charset=utf-8';

describe('news (Google News RSS)', () => {
  const up = useFakeUpstream({
    routes: {
      [GOOGLE_NEWS_PATH]: { text: GOOGLE_NEWS_RUST, contentType: XML },
    },
  });

  const fetchNews = (query = 'rust', deadline?: number) => {
    const config = liveConfig({ googleNews: up.url });
    const http = httpClientFor(config);
    return fetchGoogleNews(http, config, query, deadline);
  };

  it('returns items newest first, without the publisher suffix, one per headline', async () => {
    expect(await fetchNews()).toEqual({
      source: 'google-news',
      data: {
        items: [
          {
            title: 'Rust & C++ interop gets easier',
            url: 'https://news.google.com/rss/articles/CBMiVkFVX3lxTE9pbnRlcm9w?oc=5',
            published_at: '2026-11-21T08:30:00.000Z',
            source: 'Ars Technica',
          },
          {
            title: 'Ferrocene qualifies Rust for cars',
            url: 'https://news.google.com/rss/articles/CBMiVkFVX3lxTE9mZXJyb2Nl?oc=5',
            published_at: '2026-11-20T22:15:00.000Z',
            source: 'heise online',
          },
          {
            title: 'Rust 1.91 released with faster builds',
            url: 'https://news.google.com/rss/articles/CBMiVkFVX3lxTE1ydXN0MTkx?oc=5',
            published_at: '2026-11-20T10:00:00.000Z',
            source: 'The Verge',
          },
          {
            title: 'Rust - the language that keeps winning',
            url: 'https://news.google.com/rss/articles/CBMiVkFVX3lxTE9pbmZvd29y?oc=5',
            published_at: null,
            source: 'InfoWorld',
          },
        ],
      },
    });
  });

  it('calls /rss/search with the documented locale parameters, User-Agent and an RSS Accept', async () => {
    await fetchNews('rust async');
    expect(up.requests).toHaveLength(1);
    const [request] = up.requests;
    expect(request?.path).toBe('/rss/search');
    expect(request?.query).toEqual({ q: 'rust async', hl: 'en-US', gl: 'US', ceid: 'US:en' });
    expect(request?.rawUrl).toBe('/rss/search?q=rust%20async&hl=en-US&gl=US&ceid=US%3Aen');
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
    expect(request?.headers.accept).toBe('application/rss+xml, application/xml;q=0.9, text/xml;q=0.8');
  });

  it('accepts every RSS content type and answers an empty list for an empty feed', async () => {
    for (const contentType of ['application/rss+xml', 'text/xml; charset=UTF-8']) {
      up.route(GOOGLE_NEWS_PATH, { text: GOOGLE_NEWS_EMPTY, contentType });
      expect(await fetchNews('zzzzqqq')).toEqual({ source: 'google-news', data: { items: [] } });
    }
  });

  it('fails on an HTML bot wall, a document that is not RSS and malformed XML', async () => {
    up.route(GOOGLE_NEWS_PATH, { text: GOOGLE_SORRY_PAGE });
    const wall = await appErrorOf(fetchNews());
    expect(wall.code).toBe('upstream_failed');
    expect(wall.message).toBe(
      'The news upstream (Google News) answered with text/html; charset=utf-8 instead of the expected format; nothing was charged, try again later.',
    );
    expect(wall.details).toEqual({ source: 'google-news' });

    up.route(GOOGLE_NEWS_PATH, { text: GOOGLE_SORRY_PAGE, contentType: XML });
    const html = await appErrorOf(fetchNews());
    expect(html.message).toBe(
      'The news upstream (Google News) answered with something that is not an RSS feed; nothing was charged, try again later.',
    );

    up.route(GOOGLE_NEWS_PATH, {
      text: '<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title></feed>',
      contentType: XML,
    });
    expect((await appErrorOf(fetchNews())).message).toContain('not an RSS feed');

    up.route(GOOGLE_NEWS_PATH, { text: GOOGLE_NEWS_RUST.slice(0, 900), contentType: XML });
    const cut = await appErrorOf(fetchNews());
    expect(cut.code).toBe('upstream_failed');
    expect(cut.message).toContain('not an RSS feed');
  });

  it('fails on 500 after retries, and on 429 with and without Retry-After', async () => {
    up.route(GOOGLE_NEWS_PATH, { status: 500, text: 'Server Error' });
    const failed = await appErrorOf(fetchNews());
    expect(failed.details).toEqual({ source: 'google-news', upstream_status: 500 });
    expect(up.requests).toHaveLength(3);

    up.reset();
    up.route(GOOGLE_NEWS_PATH, { status: 429, headers: { 'Retry-After': '3600' }, text: GOOGLE_SORRY_PAGE });
    const limited = await appErrorOf(fetchNews());
    expect(limited.details).toEqual({ source: 'google-news', upstream_status: 429, retry_after_s: 3600 });
    expect(limited.message).toContain('try again in 3600 s');
    // Waiting an hour would overrun the budget: fail at once so the chain can fail over.
    expect(up.requests).toHaveLength(1);

    up.reset();
    up.route(GOOGLE_NEWS_PATH, { status: 429, text: GOOGLE_SORRY_PAGE });
    const bare = await appErrorOf(fetchNews());
    expect(bare.message).toBe(
      'The news upstream (Google News) is rate-limiting this service (HTTP 429); nothing was charged, try again in a minute.',
    );
    expect(up.requests).toHaveLength(3);
  });

  it('passes the deadline to the client', async () => {
    up.route(GOOGLE_NEWS_PATH, { text: GOOGLE_NEWS_RUST, contentType: XML, delayMs: 1000 });
    const err = await appErrorOf(fetchNews('rust', Date.now() + 150));
    expect(err.code).toBe('upstream_timeout');
  });

  it('splits the publisher off a headline', () => {
    const item = (title: string, source?: string, url?: string) => ({
      title,
      source: { '#text': source, '@_url': url },
    });
    expect(splitHeadline(item('A - B - Reuters', 'Reuters'))).toEqual({
      title: 'A - B',
      publisher: 'Reuters',
    });
    expect(splitHeadline(item('A - B', 'Reuters'))).toEqual({ title: 'A - B', publisher: 'Reuters' });
    expect(splitHeadline(item('AT&amp;T wins - AP News'))).toEqual({
      title: 'AT&amp;T wins',
      publisher: 'AP News',
    });
    expect(splitHeadline(item('Plain', undefined, 'https://www.bbc.co.uk'))).toEqual({
      title: 'Plain',
      publisher: 'bbc.co.uk',
    });
    expect(parseFeed('<rss version="2.0"><channel><item><title>1984</title></item></channel></rss>')).toEqual(
      [{ title: '1984', source: { '#text': undefined, '@_url': undefined } }],
    );
  });
});
