import { describe, expect, it } from 'vitest';
import { mergeResults } from '../../src/live/reference-search.js';
import { articleUrl } from '../../src/live/wikipedia.js';

describe('search helpers', () => {
  it('builds readable Wikipedia article URLs on the configured origin', () => {
    expect(articleUrl('https://en.wikipedia.org', 'Python_(programming_language)')).toBe(
      'https://en.wikipedia.org/wiki/Python_(programming_language)',
    );
    expect(articleUrl('https://en.wikipedia.org/w/api.php', 'AC/DC')).toBe(
      'https://en.wikipedia.org/wiki/AC/DC',
    );
    expect(articleUrl('https://en.wikipedia.org', 'Who?_Where#')).toBe(
      'https://en.wikipedia.org/wiki/Who%3F_Where%23',
    );
  });

  it('deduplicates by URL ignoring a trailing slash, host case and percent-encoding', () => {
    const r = (url: string) => ({ title: url, url, snippet: '' });
    expect(
      mergeResults(
        [r('https://example.org/a'), r('https://EXAMPLE.org/a/')],
        [r('https://example.org/%41'), r('https://example.org/A'), r('https://example.org/a?x=1')],
      ).map((x) => x.url),
    ).toEqual(['https://example.org/a', 'https://example.org/%41', 'https://example.org/a?x=1']);
  });
});
