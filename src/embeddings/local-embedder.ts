/**
 * The in-process embedding model, semantic search's default when AC_EMBEDDINGS_URL is unset (issue 31): a
 * text's vector is the mean of the GloVe vectors (word-vectors.ts) of its words, as search-text.ts reads
 * them (runs of letters and digits, lowercased), stop words and one-letter words left out. It runs in
 * microseconds, in the process, with nothing downloaded; it finds related words ("pottery" near "clay"),
 * not the sense of a sentence, so it refines the lexical ranking more than it finds on its own.
 */
import type { Embedder } from '../core/embedding-port.js';
import { termOf, words } from '../core/search-text.js';
import { readWordVectors, type WordVectors } from './word-vectors.js';

export const LOCAL_MODEL = 'glove-6b-100d-50k';

export function createLocalEmbedder(load: () => WordVectors = readWordVectors): Embedder {
  let table: WordVectors | undefined;
  const embedNow = (text: string): Float32Array => {
    table ??= load();
    const sum = new Float64Array(table.dimensions);
    for (const word of words(text)) {
      if (word.length < 2 || termOf(word) === null) continue;
      table.addTo(word, sum);
    }
    let norm = 0;
    for (let d = 0; d < sum.length; d++) {
      const x = sum[d] as number;
      norm += x * x;
    }
    const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    const out = new Float32Array(sum.length);
    for (let d = 0; d < sum.length; d++) out[d] = (sum[d] as number) * scale;
    return out;
  };
  return {
    model: LOCAL_MODEL,
    embedNow,
    async embed(texts) {
      return texts.map((text) => Array.from(embedNow(text)));
    },
  };
}
