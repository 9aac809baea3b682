/** The words the search benchmarks draw memories and queries from (bench/search.ts, bench/search-cpu.ts). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './lifecycle.js';

/** The distinct words of the search-quality corpus, most frequent first. */
export function vocabulary(): string[] {
  const corpus = JSON.parse(
    readFileSync(path.join(ROOT, 'test', 'fixtures', 'search-corpus.json'), 'utf8'),
  ) as { value: string }[];
  const counts = new Map<string, number>();
  for (const { value } of corpus) {
    for (const word of value.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
      counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([word]) => word);
}
