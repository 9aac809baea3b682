/**
 * `npm run bench:search-index`: the JSON store's search index in process, without HTTP: what a ranked query,
 * a page's snippets and a store's index work cost, over 10,000 memories of 30 words drawn (Zipf-like) from the
 * search-quality corpus's vocabulary, as in `npm run bench:search`. Plain JavaScript over the built `dist/`,
 * so that the code measured is the code served (tsx would add its own helpers to every closure).
 * Figures: microseconds per query, per page of snippets, per store; the store's index work is measured warm
 * (stores back to back) and cold (8 MB of other memory read between two stores, as an HTTP request does).
 */
import { importBuilt } from '../shared/build.mjs';
import { vocabulary as corpusVocabulary, seededRandom, zipfText } from './search-words.mjs';

const { MemorySearchIndex } = await importBuilt('store/json/memory-search-index.js');
const { rankedPage } = await importBuilt('store/json/memory-query.js');
const { queryTerms, snippetOf } = await importBuilt('core/search-text.js');

const MEMORIES = 10_000;
const vocabulary = corpusVocabulary();

// A seeded generator, so that every run measures the same memories and queries.
const random = seededRandom(1, 0x7fffffff);
const text = (n) => zipfText(vocabulary, n, random);
let clock = Date.parse('2026-01-01T00:00:00.000Z');
const memory = (i) => {
  const at = new Date(clock++).toISOString();
  return {
    agentId: 'agent',
    key: `note.${i}`,
    value: text(30),
    type: 'fact',
    metadata: {},
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
};

const perItem = (ms, n) => ((ms * 1000) / n).toFixed(1);
const lines = [];
const report = (line) => {
  lines.push(line);
  process.stderr.write(`${line}\n`);
};

const built = performance.now();
const index = new MemorySearchIndex(Array.from({ length: MEMORIES }, (_, i) => memory(i)));
report(`index of ${MEMORIES} memories built in ${(performance.now() - built).toFixed(0)} ms`);

const queries = Array.from({ length: 2000 }, () => text(1 + Math.floor(random() * 3)));
const liveAt = new Date(clock + 1e9).toISOString();
function measureQueries(label) {
  const started = performance.now();
  const pages = queries.map((query) => rankedPage({ liveAt, limit: 11, text: query }, index));
  const ranked = performance.now() - started;
  const snipped = performance.now();
  queries.forEach((query, i) => {
    const terms = queryTerms(query);
    for (const hit of pages[i].hits.slice(0, 10)) snippetOf(hit.memory.value, terms);
  });
  const snippets = performance.now() - snipped;
  report(
    `${label}: ranked query ${perItem(ranked, queries.length)} µs, a page's snippets ${perItem(snippets, queries.length)} µs`,
  );
}
measureQueries('fresh index (first pass)');
measureQueries('fresh index');

const updates = Array.from({ length: 20_000 }, () => memory(Math.floor(random() * MEMORIES)));
const warm = performance.now();
for (const update of updates) index.put(update);
rankedPage({ liveAt, limit: 11, text: 'merge' }, index); // merges what is pending
report(`store's index work, warm: ${perItem(performance.now() - warm, updates.length)} µs`);
measureQueries('after 20,000 updates');

const evict = new Float64Array(1 << 20);
let sink = 0;
let cold = 0;
const coldUpdates = updates.slice(0, 5000);
for (const update of coldUpdates) {
  for (let i = 0; i < evict.length; i += 8) sink += evict[i]++;
  const started = performance.now();
  index.put(update);
  cold += performance.now() - started;
}
const merged = performance.now();
rankedPage({ liveAt, limit: 11, text: 'merge' }, index);
cold += performance.now() - merged;
report(`store's index work, caches evicted between stores: ${perItem(cold, coldUpdates.length)} µs`);
if (sink === -1) report('');
process.stdout.write(`${lines.join('\n')}\n`);
