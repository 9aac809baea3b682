import { describe, expect, it } from 'vitest';
import { fetchGdeltNews, gdeltDate } from '../../src/live/gdelt.js';
import { httpClientFor } from '../../src/live/live-data-source.js';
import { normaliseNewsItems } from '../../src/live/news-items.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { GDELT_PATH, GDELT_QUERY_TEXT, GDELT_RATE_LIMIT_TEXT, GDELT_RUST } from '../fixtures/live/gdelt.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

const PLAIN = 'text/plain; charset=utf-8';
const REFUSAL = { text: GDELT_RATE_LIMIT_TEXT, contentType: PLAIN };

describe('news (GDELT DOC 2.0)', () => {
  const up = useFakeUpstream({
    routes: {
      [GDELT_PATH]: { json: GDELT_RUST },
    },
  });

  const fetchNews = (query = 'rust', deadline?: number) => {
    const config = liveConfig({ gdelt: up.url });
    const http = httpClientFor(config);
    return fetchGdeltNews(http, config, query, deadline);
  };

  it('returns articles newest first with clean titles, ISO dates and the domain as publisher', async () => {
    expect(await fetchNews()).toEqual({
      source: 'gdelt',
      data: {
        items: [
          {
            title: 'Rust in the Linux kernel: the "experiment" is over',
            url: 'https://www.theregister.com/2026/11/21/rust_kernel/',
            published_at: '2026-11-21T07:15:00.000Z',
            source: 'theregister.com',
          },
          {
            title: 'Rust Foundation funds security work',
            url: 'https://www.zdnet.com/article/rust-foundation-security/',
            published_at: '2026-11-20T18:00:00.000Z',
            source: 'zdnet.com',
          },
          {
            title: 'Programmiersprache Rust erobert die Industrie',
            url: 'https://www.spiegel.de/netzwelt/rust-a-123.html',
            published_at: null,
            source: 'spiegel.de',
          },
        ],
      },
    });
  });

  it('calls the documented artlist query with the User-Agent', async () => {
    await fetchNews('climate change');
    expect(up.requests).toHaveLength(1);
    const [request] = up.requests;
    expect(request?.path).toBe('/api/v2/doc/doc');
    expect(request?.query).toEqual({
      query: 'climate change',
      mode: 'artlist',
      format: 'json',
      maxrecords: '25',
      timespan: '1d',
      sort: 'datedesc',
    });
    expect(request?.rawUrl).toContain('query=climate%20change&');
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
    expect(request?.headers.accept).toBe('application/json');
  });

  it('answers an empty list when GDELT answers {} or no articles', async () => {
    up.route(GDELT_PATH, { json: {} });
    expect(await fetchNews()).toEqual({ source: 'gdelt', data: { items: [] } });
    up.route(GDELT_PATH, { json: { articles: [] } });
    expect(await fetchNews()).toEqual({ source: 'gdelt', data: { items: [] } });
  });

  it('fails on the plain-text refusals GDELT sends with status 200', async () => {
    for (const text of [GDELT_RATE_LIMIT_TEXT, GDELT_QUERY_TEXT]) {
      up.route(GDELT_PATH, { text, contentType: PLAIN });
      const err = await appErrorOf(fetchNews());
      expect(err.code).toBe('upstream_failed');
      expect(err.message).toBe(
        'The news upstream (GDELT) answered with something that is not JSON; nothing was charged, try again later.',
      );
      expect(err.details).toEqual({ source: 'gdelt' });
    }
  });

  it('fails on its plain-text 429, with and without Retry-After, and on 500', async () => {
    up.route(GDELT_PATH, { ...REFUSAL, status: 429 });
    const limited = await appErrorOf(fetchNews());
    expect(limited.message).toBe(
      'The news upstream (GDELT) is rate-limiting this service (HTTP 429); nothing was charged, try again in a minute.',
    );
    expect(limited.details).toEqual({ source: 'gdelt', upstream_status: 429 });
    expect(up.requests).toHaveLength(3);

    up.reset();
    up.route(GDELT_PATH, { ...REFUSAL, status: 429, headers: { 'Retry-After': '600' } });
    const later = await appErrorOf(fetchNews());
    expect(later.details).toEqual({ source: 'gdelt', upstream_status: 429, retry_after_s: 600 });
    expect(up.requests).toHaveLength(1);

    up.route(GDELT_PATH, { status: 500, text: 'Internal Server Error', contentType: PLAIN });
    const failed = await appErrorOf(fetchNews());
    expect(failed.code).toBe('upstream_failed');
    expect(failed.details).toEqual({ source: 'gdelt', upstream_status: 500 });
  });

  it('fails on malformed JSON, a body of the wrong shape and an HTML page', async () => {
    up.route(GDELT_PATH, {
      text: '{"articles": [{"url": "https://a.example/",',
      contentType: 'application/json',
    });
    expect((await appErrorOf(fetchNews())).message).toContain('not JSON');

    up.route(GDELT_PATH, { json: { articles: { url: 'https://a.example/' } } });
    expect((await appErrorOf(fetchNews())).message).toContain('in an unexpected format');

    up.route(GDELT_PATH, { text: '<html><body>Service Unavailable</body></html>' });
    expect((await appErrorOf(fetchNews())).code).toBe('upstream_failed');
  });

  it('passes the deadline to the client', async () => {
    up.route(GDELT_PATH, { json: GDELT_RUST, delayMs: 1000 });
    expect((await appErrorOf(fetchNews('rust', Date.now() + 150))).code).toBe('upstream_timeout');
  });

  it('reads the compact seendate and rejects what is not a date', () => {
    expect(gdeltDate('20261121T071500Z')).toBe('2026-11-21T07:15:00.000Z');
    expect(gdeltDate('20260229T000000Z')).toBeUndefined();
    expect(gdeltDate('2026-11-21T07:15:00Z')).toBeUndefined();
    expect(gdeltDate(null)).toBeUndefined();
  });
});

describe('normaliseNewsItems', () => {
  const raw = (title: string, url: string | null, published_at: string | null, source = 'Pub') => ({
    title,
    url,
    published_at,
    source,
  });

  it('strips markup, decodes entities and keeps only absolute http(s) links', () => {
    expect(
      normaliseNewsItems([
        raw(
          '<b>Big</b> &amp; <i>bold</i>\n news',
          'https://A.example/x#top',
          '2026-01-02T03:04:05+02:00',
          ' <em>Pub</em> ',
        ),
        raw('Relative', '/news/1', null),
        raw('Script', 'javascript:alert(1)', null),
        raw('No link', null, null),
        raw('<p> </p>', 'https://b.example/', null),
        raw('No publisher', 'https://www.c.example/y', 'yesterday', ''),
      ]),
    ).toEqual([
      {
        title: 'Big & bold news',
        url: 'https://a.example/x#top',
        published_at: '2026-01-02T01:04:05.000Z',
        source: 'Pub',
      },
      { title: 'No publisher', url: 'https://www.c.example/y', published_at: null, source: 'c.example' },
    ]);
  });

  it('keeps the first item per URL and per normalised title, then sorts newest first, undated last', () => {
    const items = normaliseNewsItems([
      raw('Undated first', 'https://u.example/1', null),
      raw('Old story', 'https://o.example/1', '2026-01-01T00:00:00Z', 'First'),
      raw('New story', 'https://n.example/a/', '2026-03-01T00:00:00Z'),
      raw('Same link, other title', 'https://N.example/a', '2026-04-01T00:00:00Z'),
      raw('OLD   story!', 'https://copy.example/2', '2026-05-01T00:00:00Z', 'Copy'),
      raw('Undated second', 'https://u.example/2', null),
    ]);
    expect(items.map((item) => [item.title, item.source])).toEqual([
      ['New story', 'Pub'],
      ['Old story', 'First'],
      ['Undated first', 'Pub'],
      ['Undated second', 'Pub'],
    ]);
  });
});
