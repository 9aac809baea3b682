/**
 * `npm run bench:recall [path] [--store json|postgres]` (issue 31): how well ranked memory_search finds what
 * a question is about, on LoCoMo (Maharana et al., ACL 2024; the data set: github.com/snap-research/LoCoMo,
 * `data/locomo10.json`, CC BY-NC 4.0). Default path: `../shared/data/locomo-dev` beside the checkout (three
 * of its ten conversations).
 *
 * It starts the built server (`dist/cli.js serve`) on a temporary DATA_DIR, or with `--store postgres` on
 * DATABASE_URL when set, else on a throwaway cluster (test/helpers/postgres-cluster.ts). Per conversation,
 * one agent: every turn stored through REST, in order, 100 per memory_store_batch call (key its dia_id,
 * value `Speaker: text` plus ` [shares <caption>]`, type context, metadata {session, date}); then, once the server's background
 * embedding has caught up (semantic search on), every question of categories 1-4 asked as a ranked `query`
 * (limit 25), one at a time. Printed: R@1/5/10/25 overall and per category (recall-data.ts), the mean and
 * p99 search time as the client sees it, and the embedding time per memory when semantic search is on.
 *
 * The server's environment is this process's AC_EMBEDDINGS* and AC_SEARCH* variables (e.g.
 * AC_EMBEDDINGS=off for lexical search alone) and nothing else of it. BENCH_RECALL_LOG=<file> keeps the
 * server's log. Results also go to bench/results/recall-latest.json.
 */
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { PostgresCluster } from '../../test/helpers/postgres-cluster.js';
import { BUILT_CLI, ROOT } from '../shared/build.mjs';
import { defer, makeTempDir, runMain } from '../shared/cleanup.js';
import { minimalEnv, spawnWithLog } from '../shared/processes.js';
import { BENCH_ADMIN_TOKEN, postJson, unlimitedAgent } from '../shared/rest-client.js';
import { writeResultsFile } from '../shared/results-file.js';
import { percentile } from '../shared/stats.js';
import {
  CATEGORIES,
  type Conversation,
  KS,
  loadLocomo,
  recallAt,
  type Scored,
  summarize,
} from './recall-data.js';
import { embeddingProgress, waitForEmbeddings } from './recall-embeddings.js';

const LIMIT = 25;
/** Turns per memory_store_batch call. */
const BATCH = 100;
const DATA_HINT =
  'LoCoMo is public: github.com/snap-research/LoCoMo, data/locomo10.json (CC BY-NC 4.0); pass its path.';

interface Options {
  where: string;
  store: 'json' | 'postgres';
}

function parseArgs(argv: string[]): Options {
  let where = path.resolve(ROOT, '..', 'shared', 'data', 'locomo-dev');
  let store: Options['store'] = 'json';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--store') {
      const value = argv[++i];
      if (value !== 'json' && value !== 'postgres') throw new Error('--store takes json or postgres');
      store = value;
    } else if (arg.startsWith('--store=')) {
      const value = arg.slice('--store='.length);
      if (value !== 'json' && value !== 'postgres') throw new Error('--store takes json or postgres');
      store = value;
    } else if (arg.startsWith('--')) {
      throw new Error(`unknown option ${arg}: bench:recall [path] [--store json|postgres]`);
    } else {
      where = path.resolve(arg);
    }
  }
  return { where, store };
}

/** The server's store: a fresh DATA_DIR, DATABASE_URL, or a database on a throwaway cluster. */
async function storeEnv(store: Options['store'], dir: string): Promise<Record<string, string>> {
  if (store === 'json') return { DATA_DIR: path.join(dir, 'data') };
  if (process.env.DATABASE_URL) return { DATABASE_URL: process.env.DATABASE_URL };
  const cluster = await PostgresCluster.start();
  defer(`PostgreSQL cluster ${cluster.dir}`, () => cluster.stop());
  return { DATABASE_URL: await cluster.createDatabase('recall') };
}

/** The caller's settings of search: AC_EMBEDDINGS*, AC_SEARCH*. */
function searchEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && /^AC_(EMBEDDINGS|SEARCH)/.test(name)) out[name] = value;
  }
  return out;
}

/** A new agent on the unlimited plan (so that nothing runs out of credit). */
function newAgent(url: string, id: string): Promise<string> {
  return unlimitedAgent(url, `recall-${id.replace(/[^a-z0-9-]/gi, '-').toLowerCase()}@example.com`);
}

/** The conversation's turns, in order, through memory_store_batch (100 a call, as the issue's figures were made). */
async function storeTurns(url: string, key: string, conversation: Conversation): Promise<void> {
  for (let i = 0; i < conversation.turns.length; i += BATCH) {
    const memories = conversation.turns.slice(i, i + BATCH).map((turn) => ({
      memory_key: turn.key,
      memory_value: turn.value,
      memory_type: 'context',
      metadata: { session: turn.session, date: turn.date },
    }));
    await postJson(url, '/api/ac/memory/batch', { agent_key: key, memories }, { 'x-api-key': key });
  }
}

async function ask(url: string, key: string, conversation: Conversation): Promise<Scored[]> {
  const out: Scored[] = [];
  for (const question of conversation.questions) {
    const started = performance.now();
    const answer = await postJson(
      url,
      '/api/ac/memory/search',
      { agent_key: key, query: question.text, limit: LIMIT },
      { 'x-api-key': key },
    );
    const ms = performance.now() - started;
    const ranked = (answer.memories as { memory_key: string }[]).map((m) => m.memory_key);
    out.push({ category: question.category, recall: recallAt(ranked, question.evidence), ms });
  }
  return out;
}

const fixed = (x: number, digits = 1) => x.toFixed(digits);

async function main() {
  const options = parseArgs(process.argv.slice(2));
  let conversations: Conversation[];
  try {
    conversations = loadLocomo(options.where);
  } catch (err) {
    throw new Error(`cannot read ${options.where}: ${(err as Error).message}\n${DATA_HINT}`);
  }
  if (conversations.length === 0) throw new Error(`no conversation in ${options.where}\n${DATA_HINT}`);
  const turns = conversations.reduce((sum, c) => sum + c.turns.length, 0);
  const questions = conversations.reduce((sum, c) => sum + c.questions.length, 0);
  const skipped = conversations.reduce((sum, c) => sum + c.skipped, 0);

  const { dir } = await makeTempDir('recall');
  const logFile = path.join(dir, 'server.log');
  const search = searchEnv();
  const server = spawnWithLog({
    name: 'agent-context serve',
    args: [BUILT_CLI, 'serve'],
    env: minimalEnv({
      ...(await storeEnv(options.store, dir)),
      ...search,
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      AC_LOG_LEVEL: 'debug',
      AC_LOG_FORMAT: 'json',
      AC_RATE_LIMIT: 'off',
      AC_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    }),
    logFile,
    timeoutMs: 120_000,
  });
  const { url } = await server.ready;
  process.stderr.write(
    `${conversations.length} conversations, ${turns} turns, ${questions} questions of categories 1-4 ` +
      `(${skipped} without a usable evidence id left out); ${options.store} store at ${url}\n`,
  );

  const storing = performance.now();
  const agents: string[] = [];
  for (const conversation of conversations) {
    const key = await newAgent(url, conversation.id);
    agents.push(key);
    await storeTurns(url, key, conversation);
  }
  const storeMs = performance.now() - storing;
  process.stderr.write(`stored ${turns} turns in ${fixed(storeMs / 1000)} s\n`);
  const embedding = await waitForEmbeddings(logFile, turns, (line) => process.stderr.write(`${line}\n`));

  const scored: Scored[] = [];
  for (const [i, conversation] of conversations.entries()) {
    scored.push(...(await ask(url, agents[i] as string, conversation)));
  }
  const progress = embeddingProgress(logFile);
  await server.stop();
  if (process.env.BENCH_RECALL_LOG) await copyFile(logFile, process.env.BENCH_RECALL_LOG);

  const rows = summarize(scored);
  const times = scored.map((s) => s.ms);
  const meanMs = times.reduce((a, b) => a + b, 0) / times.length;
  const p99Ms = percentile(
    [...times].sort((a, b) => a - b),
    99,
  );
  const setting = Object.entries(search)
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
  const lines = [
    `${options.store} store, ${conversations.length} conversations (${conversations.map((c) => c.id).join(', ')}), ` +
      `${scored.length} questions${setting ? `, ${setting}` : ''}`,
    '',
    `| | n | ${KS.map((k) => `R@${k}`).join(' | ')} |`,
    `|---|---|${KS.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.label} | ${r.n} | ${r.recall.map((x) => fixed(x)).join(' | ')} |`),
    '',
    `Search: mean ${fixed(meanMs, 2)} ms, p99 ${fixed(p99Ms, 2)} ms (one at a time, client-side, ${times.length} searches).`,
  ];
  const embedded = (await progress) ?? embedding;
  if (embedded) {
    lines.push(
      `Embedding: ${embedded.embedded} memories in ${fixed(embedded.ms / 1000, 2)} s of embedding work ` +
        `(${fixed(embedded.ms / Math.max(1, embedded.embedded), 2)} ms per memory), model ${embedded.model}.`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  await writeResultsFile('recall-latest.json', {
    date: new Date().toISOString(),
    store: options.store,
    data: options.where,
    settings: search,
    conversations: conversations.map((c) => c.id),
    questions: scored.length,
    categories: CATEGORIES,
    rows,
    meanMs,
    p99Ms,
    storeMs,
    embedding: embedded ?? null,
  });
}

await runMain('bench:recall', main);
