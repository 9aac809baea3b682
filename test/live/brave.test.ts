import { describe, expect, it } from 'vitest';
import { braveDate, fetchBraveNews, fetchBraveWeb } from '../../src/live/brave.js';
import type { LiveConfig } from '../../src/live/live-config.js';
import { httpClientFor } from '../../src/live/live-data-source.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { BRAVE_NEWS_PATH, BRAVE_NEWS_RUST, BRAVE_WEB_PATH, BRAVE_WEB_RUST } from '../fixtures/live/brave.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('news and web search (Brave Search API)', () => {
  const up = useFakeUpstream({
    routes: {
      [BRAVE_NEWS_PATH]: { json: BRAVE_NEWS_RUST },
      [BRAVE_WEB_PATH]: { json: BRAVE_WEB_RUST },
    },
  });

  const run = (
    fetcher: typeof fetchBraveNews,
    query = 'rust',
    extra: Partial<LiveConfig> = { apiKeys: { brave: 'k' } },
    deadline?: number,
  ) => {
    const config = liveConfig({ brave: up.url }, extra);
    const http = httpClientFor(config);
    return fetcher(http, config, query, deadline);
  };

  it('returns news newest first, with plain titles, UTC dates and the host as publisher', async () => {
    expect(await run(fetchBraveNews)).toEqual({
      source: 'brave',
      data: {
        items: [
          {
            title: 'Why Rust keeps topping the developer survey',
            url: 'https://www.infoq.com/news/2026/11/rust-survey/',
            published_at: '2026-11-21T06:10:00.000Z',
            source: 'infoq.com',
          },
          {
            title: 'Rust 1.91 brings faster builds',
            url: 'https://www.theregister.com/2026/11/20/rust_191/',
            published_at: '2026-11-20T09:45:00.000Z',
            source: 'theregister.com',
          },
          {
            title: 'Rust crab mascot gets a makeover',
            url: 'https://blog.example.org/ferris',
            published_at: null,
            source: 'blog.example.org',
          },
        ],
      },
    });
  });

  it('returns numbered web results, each URL once, as web coverage', async () => {
    expect(await run(fetchBraveWeb, 'rust language')).toEqual({
      source: 'brave',
      data: {
        results: [
          {
            position: 1,
            title: 'Rust Programming Language',
            url: 'https://www.rust-lang.org/',
            snippet: 'A language empowering everyone to build reliable and efficient software.',
          },
          {
            position: 2,
            title: 'Rust (programming language) - Wikipedia',
            url: 'https://en.wikipedia.org/wiki/Rust_(programming_language)',
            snippet: 'Rust is a general-purpose programming language emphasizing performance & safety.',
          },
          { position: 3, title: 'The Rust Book', url: 'https://doc.rust-lang.org/book/', snippet: '' },
        ],
        coverage: 'web',
      },
    });
  });

  it('sends the documented paths, counts and the subscription token', async () => {
    await run(fetchBraveNews, 'rust async');
    await run(fetchBraveWeb, 'rust async');
    expect(up.requests.map((request) => [request.path, request.query])).toEqual([
      ['/res/v1/news/search', { q: 'rust async', count: '20' }],
      ['/res/v1/web/search', { q: 'rust async', count: '10' }],
    ]);
    for (const request of up.requests) {
      expect(request.rawUrl).toContain('q=rust%20async');
      expect(request.headers['x-subscription-token']).toBe('k');
      expect(request.headers['user-agent']).toBe(USER_AGENT);
      expect(request.headers.accept).toBe('application/json');
    }
  });

  it('answers empty lists when nothing matches', async () => {
    up.route(BRAVE_NEWS_PATH, { json: { type: 'news', query: { original: 'zzz' }, results: [] } });
    up.route(BRAVE_WEB_PATH, { json: { type: 'search', query: { original: 'zzz' } } });
    expect(await run(fetchBraveNews, 'zzz')).toEqual({ source: 'brave', data: { items: [] } });
    expect(await run(fetchBraveWeb, 'zzz')).toEqual({
      source: 'brave',
      data: { results: [], coverage: 'web' },
    });
  });

  it('refuses to run without a key, calling nothing', async () => {
    for (const fetcher of [fetchBraveNews, fetchBraveWeb]) {
      const err = await appErrorOf(run(fetcher, 'rust', {}));
      expect(err.code).toBe('internal');
      expect(err.details).toEqual({ source: 'brave' });
    }
    expect((await appErrorOf(run(fetchBraveWeb, 'rust', {}))).message).toBe(
      'The search upstream (Brave Search) is not configured on this service; nothing was charged.',
    );
    expect(up.requests).toHaveLength(0);
  });

  it('reports a rejected key without retrying', async () => {
    up.route(BRAVE_WEB_PATH, {
      status: 401,
      json: { type: 'ErrorResponse', error: { code: 'SUBSCRIPTION_TOKEN_INVALID' } },
    });
    const err = await appErrorOf(run(fetchBraveWeb));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toBe(
      "The search upstream (Brave Search) rejected this service's API key (HTTP 401); nothing was charged.",
    );
    expect(err.details).toEqual({ source: 'brave', upstream_status: 401 });
    expect(up.requests).toHaveLength(1);
  });

  it('fails on 429 with and without Retry-After, and on 500', async () => {
    const rateLimited = { type: 'ErrorResponse', error: { code: 'RATE_LIMITED', status: 429 } };
    up.route(BRAVE_NEWS_PATH, { status: 429, headers: { 'Retry-After': '30' }, json: rateLimited });
    const limited = await appErrorOf(
      run(fetchBraveNews, 'rust', { apiKeys: { brave: 'k' } }, Date.now() + 5000),
    );
    expect(limited.details).toEqual({ source: 'brave', upstream_status: 429, retry_after_s: 30 });
    expect(limited.message).toBe(
      'The news upstream (Brave Search) is rate-limiting this service (HTTP 429); nothing was charged, try again in 30 s.',
    );
    expect(up.requests).toHaveLength(1);

    up.reset();
    up.route(BRAVE_NEWS_PATH, { status: 429, json: rateLimited });
    expect((await appErrorOf(run(fetchBraveNews))).message).toContain('try again in a minute');
    expect(up.requests).toHaveLength(3);

    up.route(BRAVE_WEB_PATH, { status: 500, text: 'upstream error' });
    expect((await appErrorOf(run(fetchBraveWeb))).details).toEqual({ source: 'brave', upstream_status: 500 });
  });

  it('fails on an HTML page with 200, malformed JSON and a body of the wrong shape', async () => {
    up.route(BRAVE_WEB_PATH, { text: '<!DOCTYPE html><html><body>Just a moment...</body></html>' });
    expect((await appErrorOf(run(fetchBraveWeb))).message).toContain('not JSON');
    up.route(BRAVE_NEWS_PATH, { text: '{"type":"news","results":[', contentType: 'application/json' });
    expect((await appErrorOf(run(fetchBraveNews))).message).toContain('not JSON');
    up.route(BRAVE_NEWS_PATH, { json: { type: 'news', results: [{ title: 'no url' }] } });
    expect((await appErrorOf(run(fetchBraveNews))).message).toContain('in an unexpected format');
  });

  it('reads page_age as UTC when it has no zone', () => {
    expect(braveDate('2026-11-20T09:45:00')).toBe('2026-11-20T09:45:00Z');
    expect(braveDate('2026-11-20T09:45:00+01:00')).toBe('2026-11-20T09:45:00+01:00');
    expect(braveDate('2026-11-20T09:45:00Z')).toBe('2026-11-20T09:45:00Z');
    expect(braveDate(undefined)).toBeUndefined();
  });
});
