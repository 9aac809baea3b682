/** The keys next to a key in a numbered series (search-text.ts, issue 31). */
import { describe, expect, it } from 'vitest';
import { neighbourKeys } from '../../src/core/search-text.js';

describe('neighbourKeys', () => {
  it('changes the trailing number by one each way, keeping leading zeros', () => {
    expect(neighbourKeys('D3:12')).toEqual(['D3:11', 'D3:13']);
    expect(neighbourKeys('chat/2026-05-01/turn-7')).toEqual([
      'chat/2026-05-01/turn-6',
      'chat/2026-05-01/turn-8',
    ]);
    expect(neighbourKeys('note-009')).toEqual(['note-008', 'note-010']);
    expect(neighbourKeys('step0')).toEqual(['step1']);
  });

  it('reads at most the last nine digits as the number (the rest are its stem)', () => {
    expect(neighbourKeys('x1234567890')).toEqual(['x1234567889', 'x1234567891']);
    expect(neighbourKeys('log\n000000010')).toEqual(['log\n000000009', 'log\n000000011']);
    expect(neighbourKeys('9')).toEqual(['8', '10']);
  });

  it('finds none for a key that does not end in a number', () => {
    expect(neighbourKeys('pref.editor.theme')).toEqual([]);
    expect(neighbourKeys('')).toEqual([]);
  });
});
