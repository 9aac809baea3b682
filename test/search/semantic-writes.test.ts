/**
 * Issue 38: with the in-process model alone (the JSON store's default), a write embeds nothing, now or in the
 * background: the vectors are made by the first ranked search that ranks their memories, and kept. Searches
 * answer exactly as when every write was embedded in the background (a vector store keeps that path: its
 * vectors are saved for the other instances), down to the scores. Counted with a fake model around the
 * in-process one, through the core's operations over the in-memory store.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createNodeLiveCache } from '../../src/cache/node-live-cache.js';
import { createCore } from '../../src/core/core.js';
import type { Embedder } from '../../src/core/embedding-port.js';
import { DEFAULT_LIMITS } from '../../src/core/limits.js';
import type { Memory } from '../../src/core/model.js';
import { createOperations } from '../../src/core/operation-table.js';
import { runOperation } from '../../src/core/run-operation.js';
import {
  dot,
  embeddingText,
  SemanticIndex,
  type StoredVector,
  type VectorStore,
} from '../../src/core/semantic-index.js';
import { fieldsOf, parseInput } from '../../src/core/validation.js';
import { createLocalEmbedder } from '../../src/embeddings/local-embedder.js';
import { createMemoryStore } from '../../src/store/json/json-store.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ManualClock } from '../helpers/manual-clock.js';

const local = createLocalEmbedder();
const embedNow = local.embedNow as (text: string) => Float32Array;

/** The in-process model, each text it embeds counted (in a batch or at once). */
function countingEmbedder() {
  const counts = { texts: 0 };
  const embedder: Embedder = {
    model: local.model,
    async embed(texts) {
      counts.texts += texts.length;
      return local.embed(texts);
    },
    embedNow(text) {
      counts.texts++;
      return embedNow(text);
    },
  };
  return { embedder, counts };
}

/** A vector store in memory (as PostgreSQL's keeps them with their memories): what was saved, by key. */
class SavedVectors implements VectorStore {
  readonly saved = new Map<string, StoredVector>();
  async save(_agentId: string, _model: string, vectors: readonly StoredVector[]): Promise<void> {
    for (const vector of vectors) this.saved.set(vector.key, vector);
  }
  async since(): Promise<{ vectors: StoredVector[]; watermark: string }> {
    return { vectors: [], watermark: '' };
  }
}

interface CorpusEntry {
  key: string;
  value: string;
  type: string;
  metadata: Record<string, unknown>;
}
const corpus = JSON.parse(
  readFileSync(new URL('../fixtures/search-corpus.json', import.meta.url), 'utf8'),
) as CorpusEntry[];

/** A core with the counting model (and `vectors`, when given; none: lexical only), driven through its operations. */
async function setup(vectors?: VectorStore, semanticOn = true) {
  const { embedder, counts } = countingEmbedder();
  const clock = new ManualClock(Date.parse('2026-11-21T12:00:00.000Z'));
  const core = createCore({
    store: createMemoryStore(),
    cache: createNodeLiveCache(DEFAULT_LIMITS.cacheMinutesMax),
    live: new FakeLiveSource(),
    clock,
    ...(semanticOn ? { embedder } : {}),
    ...(vectors ? { vectors } : {}),
  });
  const operations = createOperations(core.schemas);
  const email = 'writes@example.test';
  const { agent_key: key } = await core.accounts.register({ email });
  await core.accounts.addCredits({ email, cents: 1_000_000 });
  const agentId = (await core.accounts.authenticate(key)).id;
  async function body(op: string, input: Record<string, unknown>): Promise<any> {
    const operation = operations.find((o) => o.name === op);
    if (!operation) throw new Error(`no operation ${op}`);
    clock.advance(1000); // the same times on every core: ties broken alike
    const parsed = parseInput(operation.input, input, fieldsOf(operation.input));
    return (await runOperation(core, operation, agentId, parsed, undefined)).body;
  }
  return { body, counts, semantic: core.semantic as SemanticIndex };
}

/** The corpus written as an agent writes: batches, single stores, overwrites and a delete. */
async function write(body: (op: string, input: Record<string, unknown>) => Promise<any>): Promise<number> {
  const item = (entry: CorpusEntry) => ({
    memory_key: entry.key,
    memory_value: entry.value,
    memory_type: entry.type,
    metadata: entry.metadata,
  });
  let writes = 0;
  for (let i = 0; i < 200; i += 50) {
    await body('memory_store_batch', { memories: corpus.slice(i, i + 50).map(item) });
    writes += 50;
  }
  for (const entry of corpus.slice(200)) {
    await body('memory_store', item(entry));
    writes++;
  }
  for (const entry of corpus.slice(0, 20)) {
    await body('memory_store', {
      ...item(entry),
      memory_value: `${entry.value} Revised: the car needs a wash.`,
    });
    writes++;
  }
  await body('memory_delete', { memory_key: (corpus[30] as CorpusEntry).key });
  return writes;
}

/** Queries of one to three words of the corpus' values, the same on every run. */
const QUERIES = [
  'deploy',
  'car',
  'vehicle wash',
  'invoice due Friday',
  'dark mode',
  'indentation tabs',
  'database migration',
  'doctor appointment',
  'holiday',
  'coffee',
  ...corpus.filter((_, i) => i % 25 === 0).map((entry) => entry.value.split(/\s+/).slice(0, 3).join(' ')),
];

async function answers(body: (op: string, input: Record<string, unknown>) => Promise<any>) {
  const out: unknown[] = [];
  for (const query of QUERIES) {
    const answer = await body('memory_search', { query, limit: 10 });
    out.push({ query, total: answer.total, memories: answer.memories, next: answer.next_cursor });
  }
  return out;
}

describe('semantic search: what a write embeds (issue 38)', () => {
  it('with the in-process model alone, writes embed nothing; searches answer as when every write was embedded', async () => {
    const lazy = await setup();
    expect(lazy.semantic.embedsOnWrite).toBe(false);
    await write(lazy.body);
    await lazy.semantic.idle();
    expect(lazy.counts.texts).toBe(0);

    // The same writes with a vector store: embedded in the background, and saved (the PostgreSQL path).
    const vectors = new SavedVectors();
    const eager = await setup(vectors);
    expect(eager.semantic.embedsOnWrite).toBe(true);
    const writes = await write(eager.body);
    await eager.semantic.idle();
    expect(eager.counts.texts).toBeGreaterThan(0);
    expect(eager.counts.texts).toBeLessThanOrEqual(writes);
    // Every live memory's vector of its current version is saved (the delete's may be, or not).
    corpus.forEach((entry, i) => {
      if (i !== 30) expect(vectors.saved.get(entry.key)?.version).toBe(i < 20 ? 2 : 1);
    });

    const expected = await answers(eager.body);
    const found = await answers(lazy.body);
    expect(found).toEqual(expected);
    // The vectors count: lexical search alone answers otherwise.
    const lexical = await setup(undefined, false);
    await write(lexical.body);
    expect(await answers(lexical.body)).not.toEqual(expected);

    // The vectors the searches made are kept: the same searches again embed nothing more.
    const made = lazy.counts.texts;
    expect(made).toBeGreaterThan(0);
    expect(made).toBeLessThanOrEqual(corpus.length + QUERIES.length);
    expect(await answers(lazy.body)).toEqual(expected);
    expect(lazy.counts.texts).toBe(made);
  });

  it('a write forgets its key’s vector: a key written anew at the version its old vector has is embedded anew', async () => {
    const { embedder, counts } = countingEmbedder();
    const index = new SemanticIndex(embedder, (err) => {
      throw err;
    });
    const memory = (value: string): Memory => ({
      agentId: 'agent',
      key: 'note',
      value,
      type: 'context',
      metadata: {},
      createdAt: '2026-11-21T12:00:00.000Z',
      updatedAt: '2026-11-21T12:00:00.000Z',
      version: 1,
    });
    const query = (await index.embedQuery('automobile')) as Float32Array;
    const car = memory('I drive a car to work');
    const bread = memory('We baked bread on Sunday');
    expect(index.similarity('agent', car, query)).toBe(dot(query, embedNow(embeddingText(car))));
    // Expired, then stored again: version 1 once more (its history retired), another text.
    index.written('agent', [bread]);
    const similarity = index.similarity('agent', bread, query);
    expect(similarity).toBe(dot(query, embedNow(embeddingText(bread))));
    expect(similarity).not.toBe(dot(query, embedNow(embeddingText(car))));
    const made = counts.texts;
    expect(index.similarity('agent', bread, query)).toBe(similarity); // kept
    expect(counts.texts).toBe(made);
  });
});
