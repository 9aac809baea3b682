/**
 * The words the search benchmarks draw memories and queries from (search-http.ts, search-cpu.ts,
 * search-index.mjs): the search-quality corpus's vocabulary, drawn Zipf-like as words are in text. Plain
 * JavaScript, so that search-index.mjs (run by plain node) shares it; search-words.d.mts types it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../shared/build.mjs';

/** The distinct words of the search-quality corpus, most frequent first. */
export function vocabulary() {
  const corpus = JSON.parse(readFileSync(path.join(ROOT, 'test', 'fixtures', 'search-corpus.json'), 'utf8'));
  const counts = new Map();
  for (const { value } of corpus) {
    for (const word of value.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([word]) => word);
}

/**
 * A generator of numbers in [0, 1] that gives the same sequence every run from `seed`: a linear congruence mod
 * 2^31, divided by `scale` (each benchmark keeps the scale its recorded figures were made with).
 */
export function seededRandom(seed, scale) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / scale;
  };
}

/** A word, rank r drawn with probability about 1/r (Zipf), as words are in text. */
export function zipfWord(words, random = Math.random) {
  return words[Math.min(words.length - 1, Math.floor(Math.exp(random() * Math.log(words.length))))];
}

/** `n` words drawn by zipfWord, joined by spaces. */
export function zipfText(words, n, random = Math.random) {
  return Array.from({ length: n }, () => zipfWord(words, random)).join(' ');
}
