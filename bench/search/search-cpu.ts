/**
 * `npm run --silent build && npx tsx bench/search/search-cpu.ts` (issue 31): the CPU one ranked memory_search costs
 * in process, through the core (its charge included, no HTTP), over an agent of 10,000 memories shaped as
 * `npm run bench:search`'s (keys note.<n>, values of 30 words drawn Zipf-like from the search corpus'
 * vocabulary), with the in-process model's vectors all made first. N (2000) queries of 1-3 vocabulary words,
 * the same for every run (a seeded generator), after 300 to warm up; three passes, each printed as CPU
 * (`process.cpuUsage`) and wall time per search. A loaded machine moves the CPU figure far less than the wall.
 * BENCH_SEARCH_CPU_OUT=<file> writes the first pass's answers (keys and scores), to compare two versions.
 * It runs the built code (dist/).
 */
import { writeFileSync } from 'node:fs';
import { importBuilt } from '../shared/build.mjs';
import { envNumber } from '../shared/settings.js';
import { seededRandom, vocabulary, zipfText } from './search-words.mjs';

const { createNodeLiveCache } = await importBuilt('cache/node-live-cache.js');
const { createCore } = await importBuilt('core/core.js');
const { createLocalEmbedder } = await importBuilt('embeddings/local-embedder.js');
const { createMemoryStore } = await importBuilt('store/json/json-store.js');

const random = seededRandom(12345, 0x80000000);
const words = vocabulary();
const text = (n: number) => zipfText(words, n, random);

const N = envNumber('N', 2000, 1);
const store = createMemoryStore();
const core = createCore({
  store,
  cache: createNodeLiveCache(60),
  live: {},
  embedder: createLocalEmbedder(),
});
const email = 'cpu@example.test';
const { agent_key } = await core.accounts.register({ email });
const agentId = (await core.accounts.authenticate(agent_key)).id as string;
await core.accounts.addCredits({ email, cents: 10_000_000 });
const now = new Date().toISOString();
await store.transact(async (tx: { putMemory: (memory: object) => Promise<void> }) => {
  for (let i = 0; i < 10_000; i++) {
    await tx.putMemory({
      agentId,
      key: `note.${i}`,
      value: text(30),
      type: 'context',
      metadata: {},
      createdAt: now,
      updatedAt: now,
      version: 1,
    });
  }
});
const queries = Array.from({ length: N }, () => text(1 + Math.floor(random() * 3)));
const charge = { charge: { cents: 1, operation: 'memory_search' } };
const search = (query: string) => core.memories.searchMemories(agentId, { query, limit: 10 }, charge);
await search('deploy'); // the agent's first ranked search: its vectors are made in the background
await core.semantic.idle();
for (const query of queries.slice(0, 300)) await search(query);
const answers: string[] = [];
for (let pass = 0; pass < 3; pass++) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const query of queries) {
    const answer = await search(query);
    if (pass === 0) {
      const hits = answer.memories.map(
        (m: { memory_key: string; score: number }) => `${m.memory_key}:${m.score}`,
      );
      answers.push(`${query}|${answer.total}|${hits.join(',')}`);
    }
  }
  const used = process.cpuUsage(cpu);
  const ms = (used.user + used.system) / 1000 / N;
  const wall = (performance.now() - started) / N;
  console.log(
    `pass ${pass}: cpu ${ms.toFixed(3)} ms/search, wall ${wall.toFixed(3)} ms/search (${N} searches)`,
  );
}
if (process.env.BENCH_SEARCH_CPU_OUT) writeFileSync(process.env.BENCH_SEARCH_CPU_OUT, answers.join('\n'));
