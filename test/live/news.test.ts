import { describe, expect, it } from 'vitest';
import { createLiveDataSource } from '../../src/live/live-data-source.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { HN_RUST, hit } from '../fixtures/live/hn-algolia.js';
import { appErrorOf, liveConfig, USER_AGENT } from './helpers.js';

describe('news (HN Algolia)', () => {
  const hn = useFakeUpstream({
    routes: {
      '/api/v1/search_by_date': { json: HN_RUST },
    },
  });

  const source = (extra = {}) => createLiveDataSource(liveConfig({ hnAlgolia: hn.url }, extra));

  it('returns stories newest first with clean titles, links and sources', async () => {
    const result = await source().fetch('news', 'rust');
    expect(result).toEqual({
      source: 'hn-algolia',
      data: {
        items: [
          {
            title: 'Ask HN: Is Rust worth learning in 2026?',
            url: 'https://news.ycombinator.com/item?id=46000003',
            published_at: '2026-11-21T08:30:00.000Z',
            source: 'news.ycombinator.com',
            discussion_url: 'https://news.ycombinator.com/item?id=46000003',
            points: 12,
            comments: 30,
          },
          {
            title: 'Writing an OS in Rust',
            url: 'https://os.phil-opp.com/',
            published_at: '2026-11-20T23:59:59.000Z',
            source: 'os.phil-opp.com',
            discussion_url: 'https://news.ycombinator.com/item?id=46000002',
            points: 5,
            comments: 0,
          },
          {
            title: 'Rust 1.91 & the borrow checker',
            url: 'https://www.rust-lang.org/blog/1.91',
            published_at: '2026-11-20T10:00:00.000Z',
            source: 'rust-lang.org',
            discussion_url: 'https://news.ycombinator.com/item?id=46000001',
            points: 210,
            comments: 97,
          },
        ],
      },
    });
  });

  it('calls search_by_date for stories with the User-Agent', async () => {
    await source().fetch('news', 'rust async');
    expect(hn.requests).toHaveLength(1);
    const [request] = hn.requests;
    expect(request?.path).toBe('/api/v1/search_by_date');
    expect(request?.query).toEqual({ query: 'rust async', tags: 'story', hitsPerPage: '20' });
    expect(request?.headers['user-agent']).toBe(USER_AGENT);
    expect(request?.headers.accept).toBe('application/json');
  });

  it('answers an empty list when nothing matches', async () => {
    hn.route('/api/v1/search_by_date', { json: { ...HN_RUST, hits: [], nbHits: 0 } });
    expect(await source().fetch('news', 'zzzz')).toEqual({ source: 'hn-algolia', data: { items: [] } });
  });

  it('links to the discussion when the url is not http(s)', async () => {
    hn.route('/api/v1/search_by_date', {
      json: {
        hits: [
          hit({ objectID: '7', title: 'x', url: 'javascript:alert(1)', created_at: '2026-01-01T00:00:00Z' }),
        ],
      },
    });
    const { data } = await source().fetch('news', 'x');
    expect(data.items).toMatchObject([
      { url: 'https://news.ycombinator.com/item?id=7', source: 'news.ycombinator.com' },
    ]);
  });

  it('fails on 500, 429 with Retry-After, HTML and schema-invalid bodies', async () => {
    hn.route('/api/v1/search_by_date', { status: 500, json: { message: 'error' } });
    const failed = await appErrorOf(source().fetch('news', 'rust'));
    expect(failed.code).toBe('upstream_failed');
    expect(failed.message).toBe(
      'The news upstream (Hacker News Algolia) answered with HTTP 500; nothing was charged, try again later.',
    );

    hn.route('/api/v1/search_by_date', { status: 429, headers: { 'Retry-After': '3600' }, text: 'Too many' });
    const limited = await appErrorOf(source().fetch('news', 'rust'));
    expect(limited.details).toEqual({ source: 'hn-algolia', upstream_status: 429, retry_after_s: 3600 });

    hn.route('/api/v1/search_by_date', { text: '<html><body>Algolia is down</body></html>' });
    expect((await appErrorOf(source().fetch('news', 'rust'))).code).toBe('upstream_failed');

    hn.route('/api/v1/search_by_date', { json: { hits: [{ objectID: '1', title: 'no date' }] } });
    expect((await appErrorOf(source().fetch('news', 'rust'))).code).toBe('upstream_failed');
    hn.route('/api/v1/search_by_date', { json: { nbHits: 0 } });
    expect((await appErrorOf(source().fetch('news', 'rust'))).code).toBe('upstream_failed');
  });

  it('times out and fails on a refused connection', async () => {
    hn.route('/api/v1/search_by_date', { json: HN_RUST, delayMs: 1000 });
    const slow = await appErrorOf(source({ timeoutMs: 200 }).fetch('news', 'rust'));
    expect(slow.code).toBe('upstream_timeout');
    expect(slow.details).toEqual({ source: 'hn-algolia' });

    const refused = createLiveDataSource(liveConfig({ hnAlgolia: await closedPortUrl() }));
    const err = await appErrorOf(refused.fetch('news', 'rust'));
    expect(err.code).toBe('upstream_failed');
    expect(err.message).toContain('could not be reached');
  });
});
