/** holdsTerm (search-text.ts, issue 31): whether a text holds a wanted term, as `words` and `termOf` read it. */
import { describe, expect, it } from 'vitest';
import { holdsTerm, termOf, words } from '../../src/core/search-text.js';

/** The same question asked the plain way: every word's term. */
function byWords(text: string, wanted: ReadonlySet<string>): boolean {
  return words(text).some((word) => {
    const term = termOf(word);
    return term !== null && wanted.has(term);
  });
}

function holds(text: string, ...terms: string[]): boolean {
  const wanted = new Set(terms);
  const initials = new Set(terms.map((term) => term.charCodeAt(0)));
  const found = holdsTerm(text, wanted, initials);
  expect(found).toBe(byWords(text, wanted));
  return found;
}

describe('holdsTerm', () => {
  it('finds a stemmed term in ASCII text, whatever its case', () => {
    expect(holds('We LAUNCHED it on Monday', 'launch')).toBe(true);
    expect(holds('launch-pad, INC-4521', '4521')).toBe(true);
    expect(holds('the launcher', 'launch')).toBe(false);
    expect(holds('', 'launch')).toBe(false);
    expect(holds('The and of', 'the')).toBe(false);
  });

  it('reads non-ASCII text as words does', () => {
    expect(holds('Café in İstanbul', 'café')).toBe(true);
    expect(holds('Straße ﬁle', 'file')).toBe(false);
    expect(holds('Grüße aus München', 'münchen')).toBe(true);
  });
});
