/**
 * What each charged operation costs on PostgreSQL without HTTP (issues 13 and 32): `npm run
 * bench:postgres-statements`. A throwaway cluster with fsync on, 20,000 memories over 1,000 agents; the service's
 * core over the store (authenticate the key, validate, run the operation, as the faces do), 50 loops at once on
 * an instance whose pool is 10. Each charged operation is run two ways, side by side in every round:
 *
 * - `transaction`: the core's `runCharged` path as before issue 32 (BEGIN, the account's row lock, the
 *   operation's statements, the ledger entry, COMMIT, pipelined on a pooled connection: tx-pipeline.ts);
 * - `one statement`: the store's charge functions (migration 0009) on the statement channel
 *   (statement-channel.ts): one call per charged operation.
 *
 * Both read the key the same way (one statement on the channel). It prints, per operation and way, operations a
 * second and the processor time per operation of this process (Node: the core, `pg`) and of the PostgreSQL
 * processes together, the median of the rounds with every round's figure. Live data's cache is the process's
 * own in both (the shared cache's statements are not the charge's). BENCH_ROUNDS (3), BENCH_SECONDS (5),
 * BENCH_PG_OPS (a comma-separated subset of the operations below), BENCH_PG_ROUTE (tcp, or unix: the socket),
 * BENCH_PG_POOL (10: the instance's AC_DB_POOL_MAX), BENCH_PG_FSYNC (off: fsync, synchronous_commit and
 * full_page_writes off, to see what the commit's flush costs; not a figure of record), BENCH_PG_PROFILE (on: each
 * measurement runs under V8's sampling profiler, which slows it; its self time is printed by part — pg, pg-protocol,
 * our store, our core, Node's promises and sockets, the collector — and by function, in µs per operation).
 */
import pg from 'pg';
import { createNodeLiveCache } from '../../src/cache/node-live-cache.js';
import { loadConfig } from '../../src/config.js';
import { createCore } from '../../src/core/core.js';
import type { LiveDataSource } from '../../src/core/live-port.js';
import { runOperation } from '../../src/core/run-operation.js';
import type { StorePort } from '../../src/core/store-port.js';
import { fieldsOf, parseInput } from '../../src/core/validation.js';
import { openService } from '../../src/service.js';
import { createTransactionCharges } from '../../src/store/transaction-charges.js';
import { PostgresCluster } from '../../test/helpers/postgres-cluster.js';
import { makeTempDir } from '../shared/cleanup.js';
import { type CpuProfile, profiled, summarise, table } from '../shared/cpu-profile.js';
import { type BenchAgent, generatePrefill, memoryValue } from '../shared/prefill.js';
import { clusterProcesses, cpuSeconds, used } from '../shared/process-usage.js';
import { pick } from '../shared/random.js';
import { envNumber } from '../shared/settings.js';
import { median } from '../shared/stats.js';
import { writePostgres } from './prefill-postgres.js';

const ROUNDS = envNumber('BENCH_ROUNDS', 3, 1);
const SECONDS = envNumber('BENCH_SECONDS', 5, 0);
const ROUTE = process.env.BENCH_PG_ROUTE ?? 'tcp';
const LOOPS = 50;
const POOL = envNumber('BENCH_PG_POOL', 10, 1);
const PROFILE = process.env.BENCH_PG_PROFILE === 'on';

const ownCpu = () => cpuSeconds((pid) => pid === process.pid);

/** Answers every weather query at once: live data's fetch costs nothing here. */
const instantWeather: LiveDataSource = {
  fetch: async (type, query) => ({ data: { type, query, temperature_c: 12 }, source: 'bench' }),
} as LiveDataSource;

/** Each charged operation as a request: its name and input (what a face hands the core). */
type Request = { op: string; input: Record<string, unknown> };
let counter = 0;
const runId = Math.random().toString(36).slice(2, 8);
const OPERATIONS: Record<string, (agent: BenchAgent) => Request> = {
  memory_retrieve: (agent) => ({ op: 'memory_retrieve', input: { memory_key: pick(agent.memoryKeys) } }),
  memory_store: (agent) => {
    const n = counter++;
    const key = n % 2 === 0 ? `bench.new.${runId}.${n}` : pick(agent.memoryKeys);
    return {
      op: 'memory_store',
      input: { memory_key: key, memory_value: memoryValue(`${runId}.${n}`), memory_type: 'context' },
    };
  },
  memory_store_batch: (agent) => ({
    op: 'memory_store_batch',
    input: {
      memories: [...new Set(Array.from({ length: 5 }, () => pick(agent.memoryKeys)))].map((key) => ({
        memory_key: key,
        memory_value: memoryValue(`${runId}.${counter++}`),
        memory_type: 'context',
      })),
    },
  }),
  memory_search: () => ({ op: 'memory_search', input: { limit: 10 } }),
  memory_history: (agent) => ({ op: 'memory_history', input: { memory_key: pick(agent.memoryKeys) } }),
  memory_restore: (agent) => ({
    op: 'memory_restore',
    input: { memory_key: pick(agent.memoryKeys), version: 1 },
  }),
  memory_import: () => ({
    op: 'memory_import',
    input: {
      ndjson: [0, 1, 2]
        .map((i) =>
          JSON.stringify({
            memory_key: `bench.import.${runId}.${counter++}.${i}`,
            memory_value: memoryValue(counter),
            memory_type: 'fact',
          }),
        )
        .join('\n'),
    },
  }),
  data: () => ({
    op: 'data',
    input: { query_type: 'weather', query: `City ${counter++ % 500}`, cache_minutes: 0 },
  }),
};

const cluster = await PostgresCluster.start({ fsync: process.env.BENCH_PG_FSYNC !== 'off' });
try {
  const tcpUrl = await cluster.createDatabase('agent_context');
  // This cluster's processes only (the postmaster and its children): other clusters may run on the machine.
  const ofCluster = clusterProcesses(cluster.dir);
  const postgresCpu = () => cpuSeconds(ofCluster);
  const data = generatePrefill(20_000, 1_000);
  await writePostgres(tcpUrl, data);
  // memory_restore asks for version 1: each prefilled memory gets it in its history.
  const admin = new pg.Client({ connectionString: tcpUrl });
  await admin.connect();
  await admin.query(
    'INSERT INTO memory_history (agent_id, key, version, at, deleted, value, type, metadata) ' +
      'SELECT agent_id, key, version, updated_at, false, value, type, metadata FROM memories ON CONFLICT DO NOTHING',
  );
  if (process.env.BENCH_PG_SQL) await admin.query(process.env.BENCH_PG_SQL);
  await admin.end();
  const url =
    ROUTE === 'unix'
      ? `postgresql://postgres@localhost/agent_context?host=${encodeURIComponent(cluster.dir)}&port=${cluster.address.port}`
      : tcpUrl;
  /** An instance of the service on the database (the faces' settings, nothing else running). */
  const instance = () =>
    openService(
      loadConfig({
        DATABASE_URL: url,
        DATA_DIR: '',
        AC_DB_POOL_MAX: String(POOL),
        AC_EMBEDDINGS: 'off',
        AC_RATE_LIMIT: 'off',
        AC_LOG_LEVEL: 'silent',
      }),
      { command: 'bench', live: instantWeather },
    );
  const service = await instance();
  const store = service.store;
  // The transaction path: the same store charging through transactions with the core's rules (the JSON
  // store's charge port, PostgreSQL's fallback), as the core ran before issue 32.
  const inTransactions = Object.create(store, {
    charges: { value: createTransactionCharges(store) },
  }) as StorePort;
  const cores = {
    transaction: createCore({
      store: inTransactions,
      cache: createNodeLiveCache(60),
      live: instantWeather,
    }),
    'one statement': createCore({ store, cache: createNodeLiveCache(60), live: instantWeather }),
  };
  const agents = data.agents.filter((agent) => agent.memoryKeys.length > 0);
  const wanted = process.env.BENCH_PG_OPS?.split(',') ?? Object.keys(OPERATIONS);

  type Core = (typeof cores)['transaction'];
  const runner = (
    core: Core,
    make: (agent: BenchAgent) => Request,
    who: () => BenchAgent = () => pick(agents),
  ) => {
    let failures = 0;
    let firstFailure = '';
    const run = async () => {
      const agent = who();
      const request = make(agent);
      const op = service.operations.find((o) => o.name === request.op);
      if (!op) throw new Error(`no operation ${request.op}`);
      try {
        const account = await core.accounts.authenticate(agent.key);
        const input = parseInput(op.input, request.input, fieldsOf(op.input));
        await runOperation(core, op, account.id, input, undefined);
      } catch (err) {
        failures++;
        firstFailure ||= (err as Error).message;
      }
    };
    return { run, failures: () => failures, firstFailure: () => firstFailure };
  };

  console.log(
    `PostgreSQL ${cluster.address.host}:${cluster.address.port} over ${ROUTE}, fsync on; ` +
      `${data.memories.length} memories over ${agents.length} agents, ${LOOPS} loops, pool ${POOL}; ` +
      `${ROUNDS} rounds of ${SECONDS} s`,
  );
  type Figures = {
    perSecond: number;
    nodeUs: number;
    postgresUs: number;
    failures: number;
    firstFailure: string;
  };
  /** LOOPS loops for SECONDS, spread over the runners (one per instance), after one unrecorded call each. */
  const measure = async (runners: ReturnType<typeof runner>[]): Promise<Figures> => {
    await Promise.all(
      Array.from({ length: LOOPS }, (_, i) => (runners[i % runners.length] as (typeof runners)[0]).run()),
    );
    const [own, postgres] = [ownCpu(), postgresCpu()];
    const end = Date.now() + SECONDS * 1000;
    let done = 0;
    const before = runners.map((r) => r.failures());
    await Promise.all(
      Array.from({ length: LOOPS }, async (_, i) => {
        const { run } = runners[i % runners.length] as (typeof runners)[0];
        while (Date.now() < end) {
          await run();
          done++;
        }
      }),
    );
    return {
      perSecond: done / SECONDS,
      nodeUs: (used(own, ownCpu()) * 1e6) / done,
      postgresUs: (used(postgres, postgresCpu()) * 1e6) / done,
      failures: runners.reduce((sum, r, i) => sum + r.failures() - (before[i] as number), 0),
      firstFailure: runners.map((r) => r.firstFailure()).find(Boolean) ?? '',
    };
  };
  const results = new Map<string, Figures[]>();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of wanted) {
      const make = OPERATIONS[name];
      if (!make) throw new Error(`BENCH_PG_OPS: no operation ${name}`);
      const ways = Object.entries(cores).filter(
        ([way]) => !process.env.BENCH_PG_WAYS || process.env.BENCH_PG_WAYS.split(',').includes(way),
      );
      for (const [way, core] of round % 2 ? ways : [...ways].reverse()) {
        let profile: CpuProfile | undefined;
        const measured = () => measure([runner(core, make)]);
        const figures = PROFILE
          ? await profiled(measured).then((p) => {
              profile = p.profile;
              return p.result;
            })
          : await measured();
        const key = `${name}\t${way}`;
        results.set(key, [...(results.get(key) ?? []), figures]);
        console.log(
          `[${round}] ${name}, ${way}: ${Math.round(figures.perSecond)}/s; per operation, Node ` +
            `${Math.round(figures.nodeUs)} µs, PostgreSQL ${Math.round(figures.postgresUs)} µs` +
            (figures.failures ? `; ${figures.failures} failed (${figures.firstFailure})` : ''),
        );
        if (profile) {
          // The profile spans the warm-up calls too; they are few (one per loop) beside the measured ones.
          const ops = figures.perSecond * SECONDS;
          const { byPart, byFunction } = summarise(profile);
          console.log(`${table(`  self time by part (${name}, ${way})`, byPart, 20, ops)}\n`);
          console.log(`${table(`  self time by function (${name}, ${way})`, byFunction, 25, ops)}\n`);
        }
      }
    }
  }
  console.log('\n| operation | way | ops/s | Node µs per op | PostgreSQL µs per op |\n|---|---|---|---|---|');
  for (const [key, figures] of results) {
    const [name, way] = key.split('\t');
    const cell = (of: (f: Figures) => number) =>
      `**${Math.round(median(figures.map(of)))}** (${figures.map((f) => Math.round(of(f))).join(', ')})`;
    console.log(
      `| ${name} | ${way} | ${cell((f) => f.perSecond)} | ${cell((f) => f.nodeUs)} | ${cell((f) => f.postgresUs)} |`,
    );
  }

  // One busy agent (issue 32): every loop charges the same agent, on each store. On PostgreSQL its charges
  // queue for its account's row lock, held until each commit is on disk; the JSON store runs one transaction
  // at a time anyway and flushes many commits together.
  if (process.env.BENCH_PG_BUSY !== 'off') {
    const { dir: dataDir, remove } = await makeTempDir('busy');
    const json = await openService(
      loadConfig({ DATA_DIR: dataDir, AC_EMBEDDINGS: 'off', AC_RATE_LIMIT: 'off', AC_LOG_LEVEL: 'silent' }),
      { command: 'bench', live: instantWeather },
    );
    const second = await instance();
    try {
      const registered = await json.core.accounts.register({ email: 'busy@example.com' });
      for (let i = 0; i < 10; i++)
        await json.core.accounts.addCredits({ email: 'busy@example.com', cents: 100_000 });
      const jsonAgent: BenchAgent = { ...(agents[0] as BenchAgent), key: registered.agent_key };
      const busy = agents[0] as BenchAgent;
      // The key, stored on the JSON store first (PostgreSQL's agent has it from the prefill).
      const storeFirst = runner(
        json.core,
        (agent) => ({
          op: 'memory_store',
          input: { memory_key: agent.memoryKeys[0] as string, memory_value: 'v', memory_type: 'context' },
        }),
        () => jsonAgent,
      );
      await storeFirst.run();
      const ways: [string, ReturnType<typeof runner>[]][] = [];
      for (const name of ['memory_retrieve', 'memory_store']) {
        const make = (agent: BenchAgent): Request =>
          name === 'memory_retrieve'
            ? { op: name, input: { memory_key: agent.memoryKeys[0] as string } }
            : {
                op: name,
                input: {
                  memory_key: agent.memoryKeys[0] as string,
                  memory_value: memoryValue(counter++),
                  memory_type: 'context',
                },
              };
        ways.length = 0;
        ways.push(
          ['JSON store', [runner(json.core, make, () => jsonAgent)]],
          ['PostgreSQL, transaction', [runner(cores.transaction, make, () => busy)]],
          ['PostgreSQL, one statement', [runner(cores['one statement'], make, () => busy)]],
          [
            'PostgreSQL, one statement, 2 instances',
            [runner(cores['one statement'], make, () => busy), runner(second.core, make, () => busy)],
          ],
        );
        for (const [way, runners] of ways) {
          const figures = await measure(runners);
          console.log(
            `one busy agent, ${name}, ${way}: ${Math.round(figures.perSecond)}/s; per operation, Node ` +
              `${Math.round(figures.nodeUs)} µs, PostgreSQL ${Math.round(figures.postgresUs)} µs` +
              (figures.failures ? `; ${figures.failures} failed (${figures.firstFailure})` : ''),
          );
        }
      }
    } finally {
      await second.close();
      await json.close();
      await remove();
    }
  }
  await service.close();
} finally {
  await cluster.stop();
}
