/**
 * The JSON store's search index against a plain reference: BM25+ computed from scratch over the memories as
 * they are now, after any sequence of stores, replacements, removals and expiry refreshes. The index keeps
 * stale postings in place and compacts them, reuses slots, and finds key tiers in joined chunks of keys;
 * none of that may change an answer, so its scores must equal the reference's exactly (the same sums in the
 * same order) and its page and total likewise.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Memory } from '../../src/core/model.js';
import { keyTier, metadataText, queryTerms, termOf, words } from '../../src/core/search-text.js';
import { byRank, MemorySearchIndex, type RankedHit } from '../../src/store/json/memory-search-index.js';

const BOOST = [2.5, 1, 0.5];
const K = 1.2;
const B = 0.7;
const D = 0.5;

function termCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const word of words(text)) {
    const term = termOf(word);
    if (term !== null) counts.set(term, (counts.get(term) ?? 0) + 1);
  }
  return counts;
}

/** Ranked search the long way: every memory scored from its text, by the formula the index documents. */
function reference(
  memories: Memory[],
  text: string,
  accept: (memory: Memory) => boolean,
  first: number,
): { top: RankedHit[]; total: number } {
  const fields = memories.map((m) => [m.key, m.value, metadataText(m.metadata)].map(termCounts));
  const lengthOf = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);
  const count = memories.length;
  const total = [0, 1, 2].map((f) =>
    fields.reduce((sum, doc) => sum + lengthOf(doc[f] as Map<string, number>), 0),
  );
  const scores = new Array<number>(count).fill(0);
  const heldTerms = new Array<number>(count).fill(0);
  for (const term of queryTerms(text)) {
    const holds = new Array<boolean>(count).fill(false);
    for (let f = 0; f < 3; f++) {
      const df = fields.filter((doc) => doc[f]?.has(term)).length;
      if (df === 0) continue;
      const idf = Math.log(1 + (count - df + 0.5) / (df + 0.5));
      const weight = (BOOST[f] as number) * idf;
      const norm = (K * B * count) / ((total[f] as number) || 1);
      const base = K * (1 - B);
      fields.forEach((doc, i) => {
        const tf = doc[f]?.get(term);
        if (tf === undefined) return;
        const length = lengthOf(doc[f] as Map<string, number>);
        scores[i] = (scores[i] as number) + weight * (D + (tf * (K + 1)) / (tf + base + norm * length));
        holds[i] = true;
      });
    }
    holds.forEach((held, i) => {
      if (held) heldTerms[i] = (heldTerms[i] as number) + 1;
    });
  }
  const hits: RankedHit[] = [];
  memories.forEach((memory, i) => {
    const tier = keyTier(memory.key, text);
    if ((heldTerms[i] === 0 && tier === 0) || !accept(memory)) return;
    hits.push({ memory, tier, score: (scores[i] as number) * (heldTerms[i] as number) });
  });
  hits.sort(byRank);
  return { top: hits.slice(0, first), total: hits.length };
}

const VOCABULARY = [
  'deploy',
  'deployed',
  'server',
  'servers',
  'the',
  'alpha',
  'beta',
  'Gamma',
  'io',
  'note',
  'x1',
];
const KEYS = ['note', 'note.a', 'Note.B', 'deploy-server', 'alpha', 'x', 'beta gamma', 'serv'];

const PAST = '2020-01-01T00:00:00.000Z';
const NOW = '2025-01-01T00:00:00.000Z';
const FUTURE = '2030-01-01T00:00:00.000Z';
const isLiveNow = (m: Memory) => m.expiresAt === undefined || m.expiresAt > NOW;

let made = 0;
/** A memory updated now: two in each millisecond, so that ties of one millisecond are ranked by key. */
function memoryOf(key: string, value: string, tag: string | undefined, expires?: string): Memory {
  const clock = Math.floor(made++ / 2);
  return {
    agentId: 'agent',
    key,
    value,
    type: 'fact',
    metadata: tag === undefined ? {} : { tag },
    createdAt: new Date(clock).toISOString(),
    updatedAt: new Date(clock).toISOString(),
    version: 1,
    ...(expires ? { expiresAt: expires } : {}),
  };
}

const wordsArb = fc.array(fc.constantFrom(...VOCABULARY), { maxLength: 6 }).map((w) => w.join(' '));
const op = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('put' as const),
      key: fc.constantFrom(...KEYS),
      value: wordsArb,
      tag: fc.option(fc.constantFrom(...VOCABULARY), { nil: undefined }),
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('remove' as const), key: fc.constantFrom(...KEYS) }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('refresh' as const),
      key: fc.constantFrom(...KEYS),
      expiresAt: fc.constantFrom(PAST, FUTURE),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('query' as const),
      text: fc.oneof(wordsArb, fc.constantFrom(...KEYS, 'NOTE', 'ote', ' note.a ', 'a', 'deploy server')),
      first: fc.integer({ min: 1, max: 10 }),
    }),
    weight: 2,
  },
);

/** The index's answer and the reference's, with no condition and with one. */
function compare(index: MemorySearchIndex, now: Map<string, Memory>, text: string, first: number): void {
  const memories = [...now.values()];
  expect(index.rank(text, {}, first)).toEqual(reference(memories, text, () => true, first));
  expect(index.rank(text, { liveAt: NOW }, first)).toEqual(reference(memories, text, isLiveNow, first));
  const tagged = (m: Memory) => m.metadata.tag !== undefined;
  expect(index.rank(text, { liveAt: NOW, filter: tagged }, first)).toEqual(
    reference(memories, text, (m) => isLiveNow(m) && tagged(m), first),
  );
}

describe('the search index', () => {
  it('ranks as BM25+ computed from scratch, between and after any changes', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 200 }), (ops) => {
        const index = new MemorySearchIndex([]);
        const now = new Map<string, Memory>();
        for (const change of ops) {
          if (change.kind === 'put') {
            const memory = memoryOf(change.key, change.value, change.tag);
            now.set(change.key, memory);
            index.put(memory);
          } else if (change.kind === 'remove') {
            now.delete(change.key);
            index.remove(change.key);
          } else if (change.kind === 'query') {
            compare(index, now, change.text, change.first);
          } else {
            const old = now.get(change.key);
            if (!old) continue;
            const refreshed = { ...old, expiresAt: change.expiresAt };
            now.set(change.key, refreshed);
            index.refresh(refreshed);
          }
        }
        expect(index.size).toBe(now.size);
        for (const text of KEYS) compare(index, now, text, 10);
      }),
      { numRuns: 300 },
    );
  });

  it('finds keys across chunks, as their slots are freed and reused, and ranks many updates alike', () => {
    const index = new MemorySearchIndex([]);
    const now = new Map<string, Memory>();
    const put = (memory: Memory) => {
      now.set(memory.key, memory);
      index.put(memory);
    };
    for (let i = 0; i < 1500; i++)
      put(memoryOf(`k${i}.note`, i % 3 === 0 ? 'deploy server' : 'alpha', undefined));
    for (let i = 0; i < 1500; i += 7) {
      now.delete(`k${i}.note`);
      index.remove(`k${i}.note`);
    }
    for (let i = 0; i < 300; i++) put(memoryOf(`new${i}.NOTE`, 'beta', undefined));
    // Many updates of the same memories: postings go stale and are compacted.
    for (let round = 0; round < 20; round++) {
      for (let i = 1; i < 1500; i += 50)
        put(memoryOf(`k${i}.note`, round % 2 ? 'deploy' : 'server alpha', undefined));
    }
    const memories = [...now.values()];
    for (const text of ['note', 'k1.note', 'K14', 'deploy', 'server alpha', 'new29']) {
      for (const first of [1, 10, 2000]) {
        const got = index.rank(text, {}, first);
        expect(got).toEqual(reference(memories, text, () => true, first));
      }
    }
    expect(index.rank('note', {}, 10).total).toBe(now.size);
  });

  it('ranks ties of score and millisecond by key, whatever order they were stored in', () => {
    const at = '2026-05-01T10:00:00.000Z';
    const same = (key: string): Memory => ({
      ...memoryOf(key, 'deploy the server', undefined),
      createdAt: at,
      updatedAt: at,
    });
    const index = new MemorySearchIndex(['c', 'd', 'a', 'b'].map(same));
    const { top, total } = index.rank('deploy', {}, 2);
    expect(top.map((hit) => hit.memory.key)).toEqual(['a', 'b']);
    expect(total).toBe(4);
  });

  it('leaves removed a memory whose expiry is refreshed before the removal is merged', () => {
    const index = new MemorySearchIndex([memoryOf('k', 'alpha', undefined)]);
    const kept = memoryOf('k', 'alpha', undefined);
    index.remove('k');
    index.refresh({ ...kept, expiresAt: FUTURE });
    expect(index.size).toBe(0);
    expect(index.rank('alpha', {}, 10)).toEqual({ top: [], total: 0 });
  });

  it('never returns a memory the condition refuses, such as an expired one', () => {
    const index = new MemorySearchIndex([
      memoryOf('a', 'deploy', undefined, PAST),
      memoryOf('b', 'deploy', undefined),
    ]);
    const { top, total } = index.rank('deploy', { liveAt: NOW }, 10);
    expect(top.map((hit) => hit.memory.key)).toEqual(['b']);
    expect(total).toBe(1);
  });
});

describe('what the index and the term cache keep in memory', () => {
  it('keeps no value alive through a long word of it, once its memory is gone', () => {
    const out = execFileSync(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        fileURLToPath(new URL('../fixtures/term-retention.ts', import.meta.url)),
      ],
      { encoding: 'utf8' },
    );
    // Kept views into the 2,000 values would hold about 60 MB.
    expect(Number(out.trim())).toBeLessThan(15);
  });
});
