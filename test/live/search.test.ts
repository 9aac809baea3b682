import { describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { DDG_PATH, ddgPython, EMPTY_DDG, WIKI_PATH, WIKI_PYTHON } from '../fixtures/live/search.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('search (DuckDuckGo + Wikipedia)', () => {
  const up = useFakeUpstream({
    routes: ({ url }) => ({
      [DDG_PATH]: { text: JSON.stringify(ddgPython(url)), contentType: 'application/x-javascript' },
      [WIKI_PATH]: { json: WIKI_PYTHON },
    }),
  });

  const source = (extra = {}) =>
    createLiveDataSource(liveConfig({ duckduckgo: up.url, wikipedia: `${up.url}/w/` }, extra));

  it('merges the DDG abstract, related topics and Wikipedia pages, each URL once', async () => {
    const result = await source().fetch('search', 'python');
    expect(result).toEqual({
      source: 'duckduckgo+wikipedia',
      data: {
        coverage: 'reference',
        results: [
          {
            position: 1,
            title: 'Python (programming language)',
            url: `${up.url}/wiki/Python_(programming_language)`,
            snippet:
              'Python is a high-level, general-purpose programming language. Its design philosophy emphasizes code readability.',
          },
          {
            position: 2,
            title: 'Guido van Rossum',
            url: 'https://duckduckgo.com/Guido_van_Rossum',
            snippet: 'Guido van Rossum - Dutch programmer, creator of Python.',
          },
          {
            position: 3,
            title: 'Python (programming language) implementations',
            url: 'https://duckduckgo.com/c/Python_(programming_language)_implementations',
            snippet: 'Python (programming language) implementations',
          },
          {
            position: 4,
            title: 'Monty Python',
            url: `${up.url}/wiki/Monty_Python`,
            snippet: 'Monty "Python" & friends were a British comedy troupe',
          },
          {
            position: 5,
            title: 'AC/DC',
            url: `${up.url}/wiki/AC/DC`,
            snippet: 'Australian rock band',
          },
        ],
      },
    });
  });

  it('calls both documented endpoints with the User-Agent', async () => {
    await source().fetch('search', 'python programming');
    const ddg = up.requests.find((r) => r.path === DDG_PATH);
    const wiki = up.requests.find((r) => r.path === WIKI_PATH);
    expect(ddg?.query).toEqual({
      q: 'python programming',
      format: 'json',
      no_html: '1',
      skip_disambig: '1',
      t: 'agent-context',
    });
    expect(ddg?.rawUrl).toContain('q=python%20programming');
    expect(wiki?.query).toEqual({ q: 'python programming', limit: '10' });
    for (const request of [ddg, wiki]) {
      expect(request?.headers['user-agent']).toBe(USER_AGENT);
      expect(request?.headers.accept).toBe('application/json');
    }
  });

  it('calls the two upstreams in parallel', async () => {
    up.route(DDG_PATH, { json: EMPTY_DDG, delayMs: 500 });
    up.route(WIKI_PATH, { json: WIKI_PYTHON, delayMs: 500 });
    const started = Date.now();
    const result = await source().fetch('search', 'python');
    // One after the other would take at least 1 s.
    expect(Date.now() - started).toBeLessThan(900);
    expect(result.source).toBe('duckduckgo+wikipedia');
    expect(up.requests.map((r) => r.path).sort()).toEqual([DDG_PATH, WIKI_PATH]);
  });

  it('answers an empty list when neither upstream knows the query', async () => {
    up.route(DDG_PATH, { json: EMPTY_DDG });
    up.route(WIKI_PATH, { json: { pages: [] } });
    expect(await source().fetch('search', 'qwzx')).toEqual({
      source: 'duckduckgo+wikipedia',
      data: { results: [], coverage: 'reference' },
    });
  });

  it('uses Wikipedia alone when DuckDuckGo fails', async () => {
    up.route(DDG_PATH, { status: 500, text: '' });
    const result = await source().fetch('search', 'python');
    expect(result.source).toBe('wikipedia');
    expect(result.data.results).toEqual([
      {
        position: 1,
        title: 'Python (programming language)',
        url: `${up.url}/wiki/Python_(programming_language)`,
        snippet: 'Python is a high-level, general-purpose programming language.',
      },
      {
        position: 2,
        title: 'Monty Python',
        url: `${up.url}/wiki/Monty_Python`,
        snippet: 'Monty "Python" & friends were a British comedy troupe',
      },
      {
        position: 3,
        title: 'AC/DC',
        url: `${up.url}/wiki/AC/DC`,
        snippet: 'Australian rock band',
      },
    ]);
  });

  it('uses DuckDuckGo alone when Wikipedia answers HTML or times out', async () => {
    up.route(WIKI_PATH, { text: '<html><body>Please set a user-agent</body></html>' });
    const result = await source().fetch('search', 'python');
    expect(result.source).toBe('duckduckgo');
    expect((result.data.results as { url: string }[]).map((r) => r.url)).toEqual([
      `${up.url}/wiki/Python_(programming_language)`,
      'https://duckduckgo.com/Guido_van_Rossum',
      'https://duckduckgo.com/c/Python_(programming_language)_implementations',
    ]);
    up.route(WIKI_PATH, { json: WIKI_PYTHON, delayMs: 1000 });
    expect((await source({ timeoutMs: 200 }).fetch('search', 'python')).source).toBe('duckduckgo');
  });

  it('fails when both fail, keeping the shortest Retry-After', async () => {
    up.route(DDG_PATH, { status: 429, headers: { 'retry-after': '120' }, text: '' });
    up.route(WIKI_PATH, { status: 429, headers: { 'retry-after': '30' }, json: { httpCode: 429 } });
    const err = await appErrorOf(source().fetch('search', 'python'));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toBe(
      'Both search upstreams (DuckDuckGo and Wikipedia) failed; nothing was charged, try again later.',
    );
    expect(err.details).toEqual({ source: 'duckduckgo+wikipedia', retry_after_s: 30 });
    expect(err.cause).toBeInstanceOf(AggregateError);
  });

  it('fails with a schema-invalid DDG body and a 500 from Wikipedia', async () => {
    up.route(DDG_PATH, { json: { Heading: 'x', RelatedTopics: 'none' } });
    up.route(WIKI_PATH, { status: 500, text: '' });
    expect((await appErrorOf(source().fetch('search', 'python'))).code).toBe('upstream_failed');
  });

  it('times out only when both timed out', async () => {
    up.route(DDG_PATH, { json: EMPTY_DDG, delayMs: 1000 });
    up.route(WIKI_PATH, { json: WIKI_PYTHON, delayMs: 1000 });
    const both = await appErrorOf(source({ timeoutMs: 200 }).fetch('search', 'python'));
    expect(both.code).toBe('upstream_timeout');
    expect(both.details).toEqual({ source: 'duckduckgo+wikipedia' });

    up.route(WIKI_PATH, { destroy: true });
    const mixed = await appErrorOf(source({ timeoutMs: 200 }).fetch('search', 'python'));
    expect(mixed.code).toBe('upstream_failed');
  });

  it('fails when both connections are refused', async () => {
    const closed = await closedPortUrl();
    const refused = createLiveDataSource(liveConfig({ duckduckgo: closed, wikipedia: closed }));
    expect((await appErrorOf(refused.fetch('search', 'python'))).code).toBe('upstream_failed');
  });
});
