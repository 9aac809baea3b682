import { describe, expect, it } from 'vitest';
import { httpClientFor } from '../../src/live/live-data-source.js';
import { normaliseWebResults } from '../../src/live/news-items.js';
import { fetchSearxng } from '../../src/live/searxng.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { SEARXNG_ALL_ENGINES_FAILED, SEARXNG_PATH, SEARXNG_RUST } from '../fixtures/live/searxng.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('web search (SearXNG)', () => {
  const up = useFakeUpstream({
    routes: {
      [SEARXNG_PATH]: { json: SEARXNG_RUST },
    },
  });

  const search = (query = 'rust language', base: string | null = up.url, deadline?: number) => {
    const config = liveConfig(base === null ? {} : { searxng: base });
    const http = httpClientFor(config);
    return fetchSearxng(http, config, query, deadline);
  };

  it('returns numbered results, each URL once, plain text, as web coverage', async () => {
    expect(await search()).toEqual({
      source: 'searxng',
      data: {
        results: [
          {
            position: 1,
            title: 'Rust Programming Language',
            url: 'https://www.rust-lang.org/',
            snippet: 'A language empowering everyone to build reliable & efficient software.',
          },
          {
            position: 2,
            title: 'Rust (programming language) - Wikipedia',
            url: 'https://en.wikipedia.org/wiki/Rust_(programming_language)',
            snippet: 'Rust is a general-purpose programming language.',
          },
          {
            position: 3,
            title: 'https://github.com/rust-lang/rust',
            url: 'https://github.com/rust-lang/rust',
            snippet: '',
          },
        ],
        coverage: 'web',
      },
    });
  });

  it('calls /search with format=json on the configured host, keeping the documented path', async () => {
    await search('rust async', `${up.url}/searx/`);
    expect(up.requests).toHaveLength(1);
    const [request] = up.requests;
    expect(request?.rawUrl).toBe('/search?q=rust%20async&format=json');
    expect(request?.query).toEqual({ q: 'rust async', format: 'json' });
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
    expect(request?.headers.accept).toBe('application/json');
  });

  it('answers an empty list when nothing matches, but fails when every engine failed', async () => {
    up.route(SEARXNG_PATH, { json: { ...SEARXNG_RUST, results: [] } });
    expect(await search('zzzz')).toEqual({ source: 'searxng', data: { results: [], coverage: 'web' } });

    up.route(SEARXNG_PATH, { json: SEARXNG_ALL_ENGINES_FAILED });
    const err = await appErrorOf(search());
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toBe(
      'The search upstream (SearXNG) got no answer from any of its search engines; nothing was charged, try again later.',
    );
    expect(err.details).toEqual({ source: 'searxng' });
  });

  it('says that JSON output is disabled on a 403, without retrying', async () => {
    up.route(SEARXNG_PATH, { status: 403, text: '<html><body>403 Forbidden</body></html>' });
    const err = await appErrorOf(search());
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toBe(
      'The search upstream (SearXNG) refuses JSON output (HTTP 403): its operator must enable the json format; nothing was charged.',
    );
    expect(err.details).toEqual({ source: 'searxng', upstream_status: 403 });
    expect(up.requests).toHaveLength(1);
  });

  it('refuses to run without a configured instance', async () => {
    const err = await appErrorOf(search('rust', null));
    expect(err.code).toBe('internal');
    expect(err.message).toBe(
      'The search upstream (SearXNG) is not configured on this service; nothing was charged.',
    );
  });

  it('fails on 500, 429 with and without Retry-After, HTML with 200 and malformed JSON', async () => {
    up.route(SEARXNG_PATH, { status: 500, text: 'Internal Server Error' });
    expect((await appErrorOf(search())).details).toEqual({ source: 'searxng', upstream_status: 500 });
    expect(up.requests).toHaveLength(3);

    up.route(SEARXNG_PATH, { status: 429, headers: { 'Retry-After': '120' }, text: 'Too Many Requests' });
    const limited = await appErrorOf(search());
    expect(limited.details).toEqual({ source: 'searxng', upstream_status: 429, retry_after_s: 120 });

    up.route(SEARXNG_PATH, { status: 429, text: 'Too Many Requests' });
    expect((await appErrorOf(search())).message).toContain('rate-limiting this service (HTTP 429)');

    up.route(SEARXNG_PATH, { text: '<!DOCTYPE html><html><body>results</body></html>' });
    expect((await appErrorOf(search())).message).toContain('not JSON');

    up.route(SEARXNG_PATH, { text: '{"query": "rust", "results": [', contentType: 'application/json' });
    expect((await appErrorOf(search())).message).toContain('not JSON');

    up.route(SEARXNG_PATH, { json: { query: 'rust' } });
    expect((await appErrorOf(search())).message).toContain('in an unexpected format');
  });

  it('passes the deadline to the client', async () => {
    up.route(SEARXNG_PATH, { json: SEARXNG_RUST, delayMs: 1000 });
    expect((await appErrorOf(search('rust', up.url, Date.now() + 150))).code).toBe('upstream_timeout');
  });
});

describe('normaliseWebResults', () => {
  it('numbers after dropping non-http links and duplicate URLs, first copy kept', () => {
    expect(
      normaliseWebResults([
        { title: 'Data', url: 'data:text/html,<script>x</script>', snippet: '' },
        {
          title: '<strong>Rust</strong>&#39;s site',
          url: 'https://rust-lang.org/learn/',
          snippet: ' a\n\tb ',
        },
        { title: 'Again', url: 'https://RUST-LANG.org/learn#top', snippet: 'dup' },
        { title: 'Encoded', url: 'https://x.example/caf%C3%A9', snippet: '' },
        { title: 'Decoded', url: 'https://x.example/café/', snippet: '' },
        { title: 'Query differs', url: 'https://rust-lang.org/learn?x=1', snippet: '' },
      ]),
    ).toEqual([
      { position: 1, title: "Rust's site", url: 'https://rust-lang.org/learn/', snippet: 'a b' },
      { position: 2, title: 'Encoded', url: 'https://x.example/caf%C3%A9', snippet: '' },
      { position: 3, title: 'Query differs', url: 'https://rust-lang.org/learn?x=1', snippet: '' },
    ]);
  });
});
