/**
 * The word vectors of the in-process embedding model (word-vectors-en.bin beside this module, built by
 * scripts/build-word-vectors.mjs from GloVe 6B 100d): the 50,000 most frequent English words, each 100
 * signed bytes times a scale. Read once, on first use, from the package's own files: nothing is fetched.
 */
import { readFileSync } from 'node:fs';

export const WORD_VECTORS_FILE = new URL('./word-vectors-en.bin', import.meta.url);

export interface WordVectors {
  dimensions: number;
  /** Adds the word's vector times `weight` to `into`; false when the word has none. */
  addTo(word: string, into: Float64Array, weight?: number): boolean;
  size: number;
}

interface Header {
  format: string;
  dimensions: number;
  count: number;
  wordBytes: number;
}

export function readWordVectors(file: URL | string = WORD_VECTORS_FILE): WordVectors {
  const bytes = readFileSync(file);
  const newline = bytes.indexOf(10);
  const header = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as Header;
  if (header.format !== 'agent-context word vectors 1') {
    throw new Error(`${String(file)} is not a word vectors file this version reads (${header.format})`);
  }
  const { dimensions, count, wordBytes } = header;
  const wordsAt = newline + 1;
  const words = bytes
    .subarray(wordsAt, wordsAt + wordBytes)
    .toString('utf8')
    .split('\n');
  const scalesAt = Math.ceil((wordsAt + wordBytes) / 4) * 4;
  const scales = new Float32Array(
    bytes.buffer.slice(bytes.byteOffset + scalesAt, bytes.byteOffset + scalesAt + 4 * count),
  );
  const vectorsAt = scalesAt + 4 * count;
  const vectors = new Int8Array(bytes.buffer, bytes.byteOffset + vectorsAt, count * dimensions);
  const index = new Map<string, number>();
  for (const [i, word] of words.entries()) index.set(word, i);
  return {
    dimensions,
    size: count,
    addTo(word, into, weight = 1) {
      const i = index.get(word);
      if (i === undefined) return false;
      const scale = (scales[i] as number) * weight;
      const at = i * dimensions;
      for (let d = 0; d < dimensions; d++)
        into[d] = (into[d] as number) + scale * (vectors[at + d] as number);
      return true;
    },
  };
}
