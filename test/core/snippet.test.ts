/**
 * Snippets of ranked search: examples of what a person sees, and, for any text, the same passage as the
 * first implementation gave (kept below as the reference: it reads every word of the value, lowercasing
 * each alone), since the faster one stops reading once past the passage and lowercases the value once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { snippetOf, termOf } from '../../src/core/search-text.js';

const WORD = /[\p{L}\p{N}]+/gu;
const SNIPPET_CHARS = 160;

function referenceSnippet(value: string, terms: readonly string[]): string | null {
  if (terms.length === 0) return null;
  const wanted = new Set(terms);
  const matches: { start: number; end: number }[] = [];
  for (const match of value.matchAll(WORD)) {
    const term = termOf(match[0].toLowerCase());
    if (term !== null && wanted.has(term))
      matches.push({ start: match.index, end: match.index + match[0].length });
  }
  const first = matches[0];
  if (!first) return null;
  let from = Math.max(0, first.start - SNIPPET_CHARS / 4);
  let to = Math.min(value.length, from + SNIPPET_CHARS);
  from = Math.max(0, Math.min(from, to - SNIPPET_CHARS));
  if (from > 0) {
    const space = value.slice(from, first.start).search(/\s/);
    if (space >= 0) from += space + 1;
  }
  if (to < value.length) {
    const space = value.slice(first.end, to).search(/\s\S*$/);
    if (space >= 0) to = first.end + space;
  }
  let out = '';
  let at = from;
  for (const { start, end } of matches) {
    if (start < from || end > to) continue;
    out += `${value.slice(at, start)}**${value.slice(start, end)}**`;
    at = end;
  }
  out += value.slice(at, to);
  return `${from > 0 ? '…' : ''}${out.replace(/\s+/g, ' ').trim()}${to < value.length ? '…' : ''}`;
}

describe('snippetOf', () => {
  it('marks the words of the query, stems included, in a passage cut at word boundaries', () => {
    expect(snippetOf('To deploy Apollo: run the tests.', ['deploy', 'apollo'])).toBe(
      'To **deploy** **Apollo**: run the tests.',
    );
    expect(snippetOf('We deployed it twice', ['deploy'])).toBe('We **deployed** it twice');
    expect(snippetOf('nothing here', ['deploy'])).toBeNull();
    expect(snippetOf('anything', [])).toBeNull();
    const long = `${'word '.repeat(60)}target ${'tail '.repeat(60)}`;
    const snippet = snippetOf(long, ['target']) as string;
    expect(snippet.startsWith('…word')).toBe(true);
    expect(snippet.endsWith('tail…')).toBe(true);
    expect(snippet).toContain('**target**');
    expect(snippet.length).toBeLessThanOrEqual(SNIPPET_CHARS + 6);
  });

  it('relies on stems keeping their word’s first letter (it skips words by their first letter)', () => {
    const word = fc
      .tuple(
        fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), minLength: 1, maxLength: 10 }),
        fc.constantFrom('', 'ing', 'ed', 'ies', 'y', 's', 'ly', 'ational', 'ness', 'e', 'eed', 'ied', 'us'),
      )
      .map(([stemPart, ending]) => stemPart + ending);
    fc.assert(
      fc.property(word, (w) => {
        const term = termOf(w);
        if (term !== null) expect(term[0]).toBe(w[0]);
      }),
      { numRuns: 5000 },
    );
    for (const w of ['yelling', 'skies', 'dying', 'lying', 'idly', 'news', 'atlas', 'cosmos']) {
      expect(termOf(w)?.[0]).toBe(w[0]);
    }
  });

  it('gives the passage the reference gives, for any text', () => {
    const words = ['deploy', 'Deployed', 'DEPLOYS', 'the', 'apollo', 'Zürich', 'x1', 'über', 'İstanbul', 'a'];
    const separators = [' ', '  ', '\n', ', ', '-', '.', '\t'];
    const text = fc
      .array(fc.tuple(fc.constantFrom(...words), fc.constantFrom(...separators)), { maxLength: 120 })
      .map((parts) => parts.map(([w, s]) => w + s).join(''));
    const terms = fc.subarray(['deploy', 'apollo', 'zürich', 'x1', 'über', 'absent']);
    fc.assert(
      fc.property(text, terms, (value, wanted) => {
        expect(snippetOf(value, wanted)).toBe(referenceSnippet(value, wanted));
      }),
      { numRuns: 500 },
    );
  });
});
