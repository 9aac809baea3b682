/**
 * Three `agent-context serve` processes on one PostgreSQL database (a cluster of this file's own, fsync on),
 * behind no balancer: the test spreads the requests over them itself. Many clients on a few poor agents (so
 * that 402s happen) store, retrieve and delete memories and ask for live data (a fake upstream), many with
 * Idempotency-Key headers; the same key goes to two instances at once and is retried on a third. Mid-load
 * one instance is SIGKILLed (a replacement joins), and PostgreSQL is crashed and restarted
 * (`pg_ctl -m immediate`). Then the database itself is audited (issue 13, the bank test of
 * docs/research section 7):
 * - every balance equals the sum of its ledger, entry by entry, and `ledger_seq` counts the entries;
 * - no response showed a negative balance;
 * - every priced 2xx has exactly one debit, whose balance is the one the response showed; no debit without
 *   a request that may have made it; an idempotency key never has more than one debit, and its replays
 *   are byte-equal to its stored response;
 * - every acknowledged write is there (a memory stored and not deleted since, with its value), every
 *   acknowledged delete too;
 * - a request refused with "nothing was done" did nothing; every failure is JSON with a status the API
 *   documents (never a 500), and the instances serve again after the restart without one of their own.
 * A request whose outcome the client cannot know (the connection was cut, or a 503 that says it may have
 * been made) may have succeeded or not; every check allows both, and nothing more.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPSTREAM_URL_VARIABLES } from '../../../src/config-env.js';
import { normalizeQuery } from '../../../src/core/live-data.js';
import { migrate } from '../../../src/store/postgres/migrate.js';
import { type FakeUpstream, startFakeUpstream } from '../../fakes/fake-upstream.js';
import { FORECAST_PARIS, GEOCODING_PARIS } from '../../fixtures/live/open-meteo.js';
import { PostgresCluster } from '../../helpers/postgres-cluster.js';
import { type SpawnedServer, spawnServe } from '../../helpers/spawn-serve.js';

const ADMIN = 'multi-instance-operator-token';
const AGENTS = 4;
const CLIENTS = 48;
/** How long the clients keep starting new work; at least 3 s more after the database is back. */
const LOAD_MS = 12_000;
const KILL_AT_MS = 3_000;
/** Or once the replacement of the killed instance serves, if later. */
const PG_RESTART_AT_MS = 6_500;
const LOAD_AFTER_RESTART_MS = 3_000;
const TOP_UP_EVERY_MS = 200;
const TOP_UP_CENTS = 2;
const DATA_QUERY = 'Paris, FR';
const STARTER = 50;

// ---------------------------------------------------------------------------------------------------
// Instances and requests

interface Instance {
  name: string;
  server: SpawnedServer;
  /** In the rotation: started, not killed by the test, not ended by itself. */
  alive: boolean;
}

/** One HTTP exchange as the client saw it; status 0 when no answer came (connection cut, refused). */
interface Attempt {
  instance: string;
  /** When it was sent and when its answer (or failure) came, ms since the epoch. */
  at: number;
  end: number;
  status: number;
  text: string;
  body: any;
  replayed: boolean;
  error?: string;
}

/** What an attempt tells about its effect. */
type Fate = 'done' | 'not_done' | 'unknown';

function fateOf(a: Attempt): Fate {
  if (a.status >= 200 && a.status < 300) return 'done';
  if (a.status === 0) return 'unknown';
  // The store says whether anything was done: "nothing was done", or "may or may not have been made".
  if (a.status === 503) return /nothing was done/u.test(String(a.body?.error)) ? 'not_done' : 'unknown';
  return 'not_done';
}

type Op = 'memory_store' | 'memory_retrieve' | 'memory_delete' | 'data' | 'top_up';

/** A logical request and every attempt made at it (retries under one idempotency key, or after a 503). */
interface Logical {
  id: string;
  op: Op;
  agent: number;
  /** memory_key, normalised query, or '' (top-up). */
  ref: string;
  idem?: string;
  attempts: Attempt[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('three instances on one PostgreSQL, under load, an instance killed and the database crashed', () => {
  let cluster: PostgresCluster;
  let url: string;
  let upstream: FakeUpstream;
  const instances: Instance[] = [];
  const everyone: Instance[] = [];
  let serveEnv: Record<string, string>;
  const agents: { email: string; key: string }[] = [];
  /** Called when an instance ends that the test did not kill. */
  let onDeath = (_instance: Instance) => {};
  let stopping = false;

  async function startInstance(name: string): Promise<Instance> {
    const server = await spawnServe(serveEnv);
    const instance = { name, server, alive: true };
    everyone.push(instance);
    void server.exited.then(() => {
      if (!instance.alive || stopping) return;
      instance.alive = false;
      onDeath(instance);
    });
    return instance;
  }

  beforeAll(async () => {
    upstream = await startFakeUpstream({
      '/v1/search': { json: GEOCODING_PARIS },
      '/v1/forecast': { json: FORECAST_PARIS },
    });
    cluster = await PostgresCluster.start({ fsync: true });
    url = await cluster.createDatabase('multi');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await migrate(client);
    } finally {
      await client.end();
    }
    serveEnv = {
      DATABASE_URL: url,
      DATA_DIR: '',
      AC_RATE_LIMIT: 'off',
      AC_ADMIN_TOKEN: ADMIN,
      AC_LOG_LEVEL: 'info', // the "listening on" line
      AC_LOG_FORMAT: 'json',
      AC_WEATHER_PROVIDERS: 'open-meteo',
      [UPSTREAM_URL_VARIABLES.openMeteoGeocoding as string]: upstream.url,
      [UPSTREAM_URL_VARIABLES.openMeteoForecast as string]: upstream.url,
    };
    instances.push(...(await Promise.all(['A', 'B', 'C'].map(startInstance))));
  }, 60_000);

  afterAll(async () => {
    stopping = true;
    for (const instance of everyone) {
      if (instance.server.child.exitCode === null && instance.server.child.signalCode === null) {
        instance.server.child.kill('SIGKILL');
        await instance.server.exited.catch(() => undefined);
      }
    }
    await upstream?.close();
    await cluster?.stop();
  });

  async function send(
    target: Instance,
    method: string,
    route: string,
    options: { key?: string; bearer?: string; body?: unknown; query?: Record<string, string>; idem?: string },
  ): Promise<Attempt> {
    const address = new URL(route, target.server.url);
    for (const [k, v] of Object.entries(options.query ?? {})) address.searchParams.set(k, v);
    const headers: Record<string, string> = {};
    if (options.key) headers['x-api-key'] = options.key;
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    if (options.idem) headers['idempotency-key'] = options.idem;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const at = Date.now();
    try {
      const res = await fetch(address, {
        method,
        headers,
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const replayed = res.headers.get('idempotent-replayed') === 'true';
      return { instance: target.name, at, end: Date.now(), status: res.status, text, body, replayed };
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const error = cause?.code ?? cause?.message ?? String(err);
      const end = Date.now();
      return { instance: target.name, at, end, status: 0, text: '', body: undefined, replayed: false, error };
    }
  }

  it('keeps every balance, debit and acknowledged write exact', { timeout: 120_000 }, async () => {
    const started = Date.now();
    const timings: Record<string, number> = {};

    // Agents: registered, then poor: a starter credit and small top-ups while the load runs.
    for (let i = 0; i < AGENTS; i++) {
      const email = `poor${i}@example.com`;
      const res = await send(instances[i % instances.length] as Instance, 'POST', '/api/ac/register', {
        body: { email },
      });
      expect(res.status, res.text).toBe(200);
      agents.push({ email, key: res.body.agent_key as string });
    }

    const logicals: Logical[] = [];
    const violations: string[] = [];
    const violate = (what: string) => {
      violations.push(what);
    };
    let turn = 0;
    const alive = () => instances.filter((i) => i.alive);
    const next = (): Instance => {
      const list = alive().length > 0 ? alive() : everyone; // none alive: the load is ending
      return list[turn++ % list.length] as Instance;
    };
    let loadEnds = Date.now() + LOAD_MS;
    const loading = () => Date.now() < loadEnds;
    // An instance that ends by itself fails the test (see the end); the load stops at once.
    onDeath = (instance) => {
      timings[`${instance.name}EndedAtMs`] = Date.now() - started;
      loadEnds = Date.now();
    };

    /** Checks what any answer must be: JSON; a failure with `error` and `code`, of a status it may have. */
    function checkAnswer(logical: Logical, a: Attempt, allowed: number[]): void {
      const where = `${logical.id} on ${a.instance}: ${a.status} ${a.text.slice(0, 300)}`;
      if (a.status === 0) return;
      if (a.body === undefined || typeof a.body !== 'object') {
        violate(`not JSON: ${where}`);
        return;
      }
      if (!allowed.includes(a.status)) violate(`unexpected status: ${where}`);
      if (a.status >= 400 && (typeof a.body.error !== 'string' || typeof a.body.code !== 'string'))
        violate(`an error without error and code: ${where}`);
      if (a.status === 503 && a.body.code !== 'unavailable')
        violate(`a 503 that is not unavailable: ${where}`);
      if (a.status === 409 && a.body.code !== 'idempotency_in_progress') violate(`a 409: ${where}`);
      if (a.replayed && !logical.idem) violate(`a replay without a key: ${where}`);
      // A 2xx's balance, or a 402's (its details are fields of the body).
      const b = a.body.credit_balance_cents;
      if (b !== undefined && !(typeof b === 'number' && b >= 0)) violate(`balance ${b}: ${where}`);
    }

    const STATUSES: Record<Op, number[]> = {
      memory_store: [200, 402, 503],
      memory_retrieve: [200, 402, 404, 503],
      memory_delete: [200, 404, 503],
      data: [200, 402, 502, 503, 504],
      top_up: [200, 503],
    };

    /**
     * Runs a logical request, each attempt on the next instance. With an idempotency key it is retried
     * while its outcome is unknown, the key is busy (409) or the database is away (503); without one, only
     * after a 503 that says nothing was done (a retry of an unknown outcome could pay twice).
     */
    async function perform(
      logical: Logical,
      attempt: (target: Instance) => Promise<Attempt>,
      retries = 6,
    ): Promise<Attempt> {
      logicals.push(logical);
      for (let n = 0; ; n++) {
        const a = await attempt(next());
        logical.attempts.push(a);
        checkAnswer(logical, a, logical.idem ? [...STATUSES[logical.op], 409] : STATUSES[logical.op]);
        const fate = fateOf(a);
        const retry = logical.idem
          ? fate === 'unknown' || a.status === 409 || a.status === 503
          : a.status === 503 && fate === 'not_done';
        if (!retry || n >= retries) return a;
        await sleep(a.status === 409 ? 150 : 60);
      }
    }

    const agentOf = (logical: Logical) => agents[logical.agent] as { email: string; key: string };

    function memoryRequest(op: Op, agent: number, key: string, value: string, idem?: string) {
      const logical: Logical = { id: `${op} ${key}`, op, agent, ref: key, attempts: [] };
      if (idem) logical.idem = idem;
      const { key: apiKey } = agentOf(logical);
      const run = (target: Instance) => {
        const base = { key: apiKey, ...(idem ? { idem } : {}) };
        if (op === 'memory_store')
          return send(target, 'POST', '/api/ac/memory', {
            ...base,
            body: { agent_key: apiKey, memory_key: key, memory_value: value },
          });
        if (op === 'memory_retrieve')
          return send(target, 'GET', '/api/ac/memory', {
            ...base,
            query: { agent_key: apiKey, memory_key: key },
          });
        return send(target, 'DELETE', '/api/ac/memory', {
          ...base,
          body: { agent_key: apiKey, memory_key: key },
        });
      };
      return { logical, run };
    }

    // What each memory key may be now, in the eyes of the one client that owns it.
    interface KeyModel {
      agent: number;
      key: string;
      value: string;
      /** Whether the memory may exist (true) or may not (false). */
      may: Set<boolean>;
    }
    const keys: KeyModel[] = [];

    function observe(model: KeyModel, op: Op, a: Attempt, where: string): void {
      const fate = fateOf(a);
      if (op === 'memory_store') {
        if (fate === 'done') {
          if (a.body.memory?.memory_value !== model.value || a.body.memory?.memory_key !== model.key)
            violate(`${where}: stored something else: ${a.text}`);
          model.may = new Set([true]);
        } else if (fate === 'unknown') model.may.add(true);
        return;
      }
      if (op === 'memory_retrieve') {
        if (fate === 'done') {
          if (!model.may.has(true)) violate(`${where}: read a memory that cannot exist: ${a.text}`);
          if (a.body.memory?.memory_value !== model.value) violate(`${where}: read another value: ${a.text}`);
          model.may = new Set([true]);
        } else if (a.status === 404) {
          if (!model.may.has(false)) violate(`${where}: an acknowledged memory is gone (404)`);
          model.may = new Set([false]);
        }
        return;
      }
      // delete
      if (fate === 'done') {
        // A replay answers for a delete done earlier, when the memory was there.
        if (!model.may.has(true)) violate(`${where}: deleted a memory that cannot exist`);
        model.may = new Set([false]);
      } else if (a.status === 404) {
        if (!model.may.has(false)) violate(`${where}: an acknowledged memory is gone (404 on delete)`);
        model.may = new Set([false]);
      } else if (fate === 'unknown') model.may.add(false);
    }

    async function memoryStep(op: Op, model: KeyModel, idem?: string): Promise<void> {
      const { logical, run } = memoryRequest(op, model.agent, model.key, model.value, idem);
      await perform(logical, run);
      // Every attempt, in order: a keyed retry's answers all speak of the one request.
      for (const a of logical.attempts) observe(model, op, a, `${logical.id} on ${a.instance}`);
    }

    async function dataStep(agent: number, idem?: string): Promise<void> {
      const ref = normalizeQuery(DATA_QUERY); // as the ledger records it
      const logical: Logical = { id: `data ${agent} ${idem ?? ''}`, op: 'data', agent, ref, attempts: [] };
      if (idem) logical.idem = idem;
      const { key } = agentOf(logical);
      await perform(logical, (target) =>
        send(target, 'POST', '/api/ac/data', {
          key,
          ...(idem ? { idem } : {}),
          body: { agent_key: key, query_type: 'weather', query: DATA_QUERY, cache_minutes: 0 },
        }),
      );
    }

    async function client(c: number): Promise<void> {
      const agent = c % AGENTS;
      for (let n = 0; loading(); n++) {
        const keyed = (what: string, odds: number) =>
          Math.random() < odds ? `idem-${what}-${c}-${n}` : undefined;
        if (c % 12 === 0 && n % 4 === 3) {
          await dataStep(agent, keyed('data', 0.5));
          continue;
        }
        const model: KeyModel = {
          agent,
          key: `c${c}-${n}`,
          value: `value of c${c}-${n} ✓ ${Math.random()}`,
          may: new Set([false]),
        };
        keys.push(model);
        await memoryStep('memory_store', model, keyed('store', 0.5));
        if (!model.may.has(true)) continue; // refused: nothing to read or delete
        if (Math.random() < 0.6) await memoryStep('memory_retrieve', model, keyed('retrieve', 0.3));
        if (Math.random() < 0.4) await memoryStep('memory_delete', model, keyed('delete', 0.3));
      }
    }

    /** The same key to two instances at once, then retried on a third. */
    const duos: { logical: Logical; model: KeyModel; first: Attempt[]; retries: Attempt[] }[] = [];
    async function duoClient(d: number): Promise<void> {
      for (let n = 0; loading(); n++) {
        const agent = (d + n) % AGENTS;
        const model: KeyModel = {
          agent,
          key: `duo${d}-${n}`,
          value: `duo value ${d}-${n}`,
          may: new Set([false]),
        };
        keys.push(model);
        const idem = `idem-duo-${d}-${n}`;
        const { logical, run } = memoryRequest('memory_store', agent, model.key, model.value, idem);
        logicals.push(logical);
        const list = alive().length > 0 ? alive() : everyone;
        const [one, two] = [list[n % list.length], list[(n + 1) % list.length]] as [Instance, Instance];
        const first = await Promise.all([run(one), run(two)]);
        logical.attempts.push(...first);
        for (const a of first) checkAnswer(logical, a, [...STATUSES.memory_store, 409]);
        const retries: Attempt[] = [];
        for (let r = 0; r < 8; r++) {
          const third = alive().find((i) => i !== one && i !== two) ?? next();
          const a = await run(third);
          retries.push(a);
          logical.attempts.push(a);
          checkAnswer(logical, a, [...STATUSES.memory_store, 409]);
          if (a.status === 200 || a.status === 402) break;
          await sleep(a.status === 409 ? 150 : 60);
        }
        for (const a of logical.attempts) observe(model, 'memory_store', a, `${logical.id} on ${a.instance}`);
        duos.push({ logical, model, first, retries });
        await sleep(20);
      }
    }

    // Top-ups keep the agents poor but not dead; a top-up is not idempotent, so it is never retried.
    async function topUps(): Promise<void> {
      while (loading()) {
        await Promise.all(
          agents.map(async ({ email }, agent) => {
            const logical: Logical = { id: `top_up ${email}`, op: 'top_up', agent, ref: '', attempts: [] };
            await perform(
              logical,
              (target) =>
                send(target, 'POST', '/api/ac/admin/credits', {
                  bearer: ADMIN,
                  body: { email, cents: TOP_UP_CENTS },
                }),
              0,
            );
          }),
        );
        await sleep(TOP_UP_EVERY_MS);
      }
    }

    // The faults, at their moments of the load.
    let replacement: Promise<void> = Promise.resolve();
    let restartWindow: { from: number; to: number } | undefined;
    const recovery: Record<string, number> = {};
    async function faults(loadStart: number): Promise<void> {
      await sleep(loadStart + KILL_AT_MS - Date.now());
      const victim = instances[2] as Instance;
      victim.alive = false;
      victim.server.child.kill('SIGKILL');
      timings.killedAtMs = Date.now() - loadStart;
      replacement = startInstance('D').then((d) => {
        instances.push(d);
        timings.replacementJoinedAtMs = Date.now() - loadStart;
      });
      await replacement; // up before the database goes away: its start needs the database
      await sleep(loadStart + PG_RESTART_AT_MS - Date.now());
      const from = Date.now();
      await cluster.restart({ mode: 'immediate' });
      restartWindow = { from, to: Date.now() };
      timings.pgRestartAtMs = from - loadStart;
      timings.pgRestartTookMs = restartWindow.to - from;
      // Every instance serves again on its own: an authenticated read that needs the database.
      await Promise.all(
        alive().map(async (instance) => {
          const deadline = Date.now() + 15_000;
          while (instance.alive) {
            const a = await send(instance, 'GET', '/api/ac/account', { key: agents[0]?.key as string });
            if (a.status === 200) {
              recovery[instance.name] = Date.now() - (restartWindow as { to: number }).to;
              return;
            }
            if (Date.now() > deadline) {
              violate(
                `${instance.name} did not serve again within 15 s of the restart: ${a.status} ${a.text}`,
              );
              return;
            }
            await sleep(50);
          }
        }),
      );
      loadEnds = Math.max(loadEnds, Date.now() + LOAD_AFTER_RESTART_MS);
    }

    const loadStart = Date.now();
    loadEnds = loadStart + LOAD_MS;
    timings.setupMs = loadStart - started;
    await Promise.all([
      ...Array.from({ length: CLIENTS }, (_, c) => client(c)),
      duoClient(0),
      duoClient(1),
      topUps(),
      faults(loadStart),
    ]);
    await replacement;
    timings.loadMs = Date.now() - loadStart;

    // -------------------------------------------------------------------------------------------------
    // The audit, on the database itself.
    const auditStart = Date.now();
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    let accounts: { id: string; email: string; balance: number; seq: number }[];
    let ledger: {
      agent: string;
      seq: number;
      operation: string;
      amount: number;
      after: number;
      ref: string;
      idem: string | null;
    }[];
    let memories: Map<string, string>;
    let records: Map<string, { state: string; body: string | null }>;
    try {
      accounts = (
        await db.query('SELECT id, email, balance_cents, ledger_seq FROM accounts ORDER BY email')
      ).rows.map((r) => ({
        id: r.id,
        email: r.email,
        balance: Number(r.balance_cents),
        seq: Number(r.ledger_seq),
      }));
      ledger = (
        await db.query(
          'SELECT agent_id, seq, operation, amount_cents, balance_after_cents, memory_key, query, idempotency_key ' +
            'FROM ledger ORDER BY agent_id, seq',
        )
      ).rows.map((r) => ({
        agent: r.agent_id,
        seq: Number(r.seq),
        operation: r.operation,
        amount: Number(r.amount_cents),
        after: Number(r.balance_after_cents),
        ref: r.memory_key ?? r.query ?? '',
        idem: r.idempotency_key,
      }));
      memories = new Map(
        (
          await db.query(
            "SELECT a.email, m.key, convert_from(m.value, 'UTF8') AS value FROM memories m JOIN accounts a ON a.id = m.agent_id",
          )
        ).rows.map((r) => [`${r.email} ${r.key}`, r.value as string]),
      );
      records = new Map(
        (
          await db.query(
            'SELECT a.email, i.key, i.state, i.body::text AS body FROM idempotency i JOIN accounts a ON a.id = i.agent_id',
          )
        ).rows.map((r) => [`${r.email} ${r.key}`, { state: r.state, body: r.body }]),
      );
      // No idempotency key has more than one debit, where the ledger records the key.
      const twice = await db.query(
        'SELECT agent_id, idempotency_key, count(*) AS n FROM ledger WHERE idempotency_key IS NOT NULL ' +
          'GROUP BY agent_id, idempotency_key HAVING count(*) > 1',
      );
      for (const r of twice.rows) violate(`idempotency key ${r.idempotency_key} has ${r.n} ledger entries`);
      // Not vacuous: keyed requests were charged, and their debits carry the key.
      const keyed = await db.query('SELECT count(*)::int AS n FROM ledger WHERE idempotency_key IS NOT NULL');
      if (keyed.rows[0].n === 0) violate('no ledger entry carries an idempotency key');
    } finally {
      await db.end();
    }

    // 1. Every balance is the sum of its ledger, entry by entry; ledger_seq counts the entries.
    expect(accounts.map((a) => a.email)).toEqual(agents.map((a) => a.email));
    const emailOf = new Map(accounts.map((a) => [a.id, a.email]));
    for (const account of accounts) {
      const entries = ledger.filter((e) => e.agent === account.id);
      const first = entries[0];
      if (first?.operation !== 'starter_credit' || first.amount !== STARTER)
        violate(`${account.email}: the first entry is ${JSON.stringify(first)}`);
      let sum = 0;
      entries.forEach((e, i) => {
        sum += e.amount;
        if (e.seq !== i + 1) violate(`${account.email}: entry ${i + 1} has seq ${e.seq}`);
        if (e.after !== sum)
          violate(`${account.email} #${e.seq}: balance after ${e.after}, running sum ${sum}`);
        if (e.after < 0) violate(`${account.email} #${e.seq}: negative balance ${e.after}`);
      });
      if (account.balance !== sum)
        violate(`${account.email}: balance ${account.balance}, SUM(ledger) ${sum}`);
      if (account.seq !== entries.length)
        violate(`${account.email}: ledger_seq ${account.seq}, ${entries.length} entries`);
    }
    const operations = new Set(ledger.map((e) => e.operation));
    for (const operation of operations)
      if (!['starter_credit', 'top_up', 'memory_store', 'memory_retrieve', 'data'].includes(operation))
        violate(`a ledger entry of ${operation}, which nobody asked for`);

    // 2. and 3. Debits: per agent, operation and what it concerned, the ledger holds one entry for each
    // request that was charged, and at most one more for each whose outcome is unknown; the balance each
    // charged response showed is that of an entry of its own. A keyed request is one request, however many
    // attempts it took, and all its 2xx are byte-equal.
    interface Group {
      charged: number;
      maybe: number;
      shown: number[];
      where: string[];
    }
    const groups = new Map<string, Group>();
    const groupOf = (email: string, operation: string, ref: string) => {
      const id = `${email} ${operation} ${ref}`;
      let group = groups.get(id);
      if (!group) {
        group = { charged: 0, maybe: 0, shown: [], where: [] };
        groups.set(id, group);
      }
      return group;
    };
    let answered = 0;
    const statuses = new Map<string, number>();
    for (const logical of logicals) {
      const email = agentOf(logical).email;
      const ok = logical.attempts.filter((a) => fateOf(a) === 'done');
      for (const a of logical.attempts) {
        const status = a.status === 0 ? `no answer (${a.error})` : String(a.status);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
      answered += logical.attempts.length;
      if (ok.length > 1) {
        if (!logical.idem) violate(`${logical.id}: ran twice without a key`);
        for (const a of ok)
          if (a.text !== ok[0]?.text) violate(`${logical.id}: 2xx that differ:\n${ok[0]?.text}\n${a.text}`);
      }
      if (logical.idem) {
        const fresh = ok.filter((a) => !a.replayed);
        if (fresh.length > 1) violate(`${logical.id}: ran ${fresh.length} times under one key`);
        const record = records.get(`${email} ${logical.idem}`);
        if (ok[0] && record?.body !== ok[0].text)
          violate(`${logical.id}: the stored response is not the one sent:\n${record?.body}\n${ok[0].text}`);
        // Once a response was sent, its record is stored: an attempt sent later replays it (or finds the
        // database away).
        const sent = ok[0]?.end ?? Number.POSITIVE_INFINITY;
        const replays = (a: Attempt) =>
          (a.status === 200 && a.replayed) || a.status === 503 || a.status === 0;
        for (const a of logical.attempts)
          if (a.at > sent && !replays(a))
            violate(`${logical.id}: ${a.status} on a retry after its response was sent: ${a.text}`);
      }
      const operation = logical.op;
      if (operation === 'memory_delete') continue; // free: no ledger entry
      const group = groupOf(email, operation, logical.ref);
      group.where.push(
        `${logical.id}: ${logical.attempts.map((a) => `${a.instance} ${a.status}`).join(', ')}`,
      );
      const paid = ok[0] && (operation === 'top_up' || ok[0].body.cost_cents > 0);
      if (ok[0] && operation !== 'top_up' && ok[0].body.cost_cents === 0 && !ok[0].body.from_cache)
        violate(`${logical.id}: free and not from the cache: ${ok[0].text}`);
      if (paid) {
        group.charged++;
        group.shown.push(ok[0]?.body.credit_balance_cents as number);
      } else if (!ok[0] && logical.attempts.some((a) => fateOf(a) === 'unknown')) group.maybe++;
    }
    const entriesOf = new Map<string, number[]>();
    for (const e of ledger) {
      if (e.operation === 'starter_credit') continue;
      const id = `${emailOf.get(e.agent)} ${e.operation} ${e.ref}`;
      entriesOf.set(id, [...(entriesOf.get(id) ?? []), e.after]);
    }
    for (const [id, afters] of entriesOf)
      if (!groups.has(id)) violate(`${id}: ${afters.length} ledger entries that no request explains`);
    for (const [id, group] of groups) {
      const afters = [...(entriesOf.get(id) ?? [])];
      const where = `${id}\n  ${group.where.slice(0, 8).join('\n  ')}`;
      if (afters.length < group.charged)
        violate(`${where}\n  charged ${group.charged} times, ${afters.length} ledger entries`);
      if (afters.length > group.charged + group.maybe)
        violate(
          `${where}\n  ${afters.length} ledger entries for ${group.charged} charged and ${group.maybe} unknown`,
        );
      for (const shown of group.shown) {
        const i = afters.indexOf(shown);
        if (i < 0) violate(`${where}\n  showed balance ${shown}, which no entry of its own has`);
        else afters.splice(i, 1);
      }
    }

    // 4. Every acknowledged write is there, every acknowledged delete too; an unknown one either way.
    for (const model of keys) {
      const email = agents[model.agent]?.email as string;
      const stored = memories.get(`${email} ${model.key}`);
      const present = stored !== undefined;
      if (!model.may.has(present))
        violate(`${email} ${model.key}: ${present ? 'present' : 'absent'}, must be ${[...model.may]}`);
      if (present && stored !== model.value) violate(`${email} ${model.key}: holds ${stored}`);
    }
    const ownedKeys = new Set(keys.map((k) => `${agents[k.agent]?.email} ${k.key}`));
    for (const key of memories.keys()) if (!ownedKeys.has(key)) violate(`${key}: a memory nobody stored`);

    // The duos: at most one of the two ran; a retry after a 2xx replays it byte for byte.
    let duoRaces = 0;
    for (const { logical, first, retries } of duos) {
      const fresh = first.filter((a) => a.status === 200 && !a.replayed);
      if (fresh.length > 1) violate(`${logical.id}: both instances ran it`);
      if (fresh.length === 1 && first.some((a) => a.status === 409 || (a.status === 200 && a.replayed)))
        duoRaces++;
      const done = first.find((a) => a.status === 200);
      const last = retries.at(-1);
      if (done && last && last.status !== 0 && last.status !== 503 && !(last.status === 200 && last.replayed))
        violate(`${logical.id}: the retry did not replay: ${last.status} ${last.text}`);
    }

    timings.auditMs = Date.now() - auditStart;
    timings.totalMs = Date.now() - started;
    const during = (a: Attempt) =>
      restartWindow !== undefined && a.at >= restartWindow.from - 100 && a.at <= restartWindow.to + 2000;
    const all = logicals.flatMap((l) => l.attempts);
    const summary = {
      timings,
      recovery,
      attempts: answered,
      logicals: logicals.length,
      statuses: Object.fromEntries([...statuses].sort()),
      duos: duos.length,
      duoRaces,
      ledgerEntries: ledger.length,
      ledgerIdempotencyKeys: ledger.filter((e) => e.idem !== null).length,
      memories: memories.size,
      balances: accounts.map((a) => a.balance),
      lostToKill: all.filter((a) => a.instance === 'C' && a.status === 0).length,
      unavailableAroundRestart: all.filter((a) => during(a) && a.status === 503).length,
    };
    console.info('multi-instance:', JSON.stringify(summary, null, 1));
    // No instance ended but the one killed; one that did shows the end of its log.
    for (const instance of everyone) {
      const { exitCode, signalCode } = instance.server.child;
      if (instance.name === 'C' || (exitCode === null && signalCode === null)) continue;
      const tail = instance.server
        .stderr()
        .split('\n')
        .filter((line) => !line.includes('"msg":"request"'))
        .slice(-25)
        .join('\n');
      violate(
        `instance ${instance.name} ended (${exitCode ?? signalCode}) during the test; its log:\n${tail}`,
      );
    }
    const shown = violations.slice(0, 40).join('\n\n');
    expect(violations.length, `${violations.length} violations; the first:\n\n${shown}`).toBe(0);
    // The load did what it is for: successes, 402s, 503s while the database was down, real races.
    expect(all.filter((a) => a.status === 200).length).toBeGreaterThan(100);
    expect(all.filter((a) => a.status === 402).length).toBeGreaterThan(5);
    expect(summary.unavailableAroundRestart).toBeGreaterThan(0);
    expect(duoRaces).toBeGreaterThan(0);
    expect(Object.keys(recovery).sort()).toEqual(
      alive()
        .map((i) => i.name)
        .sort(),
    );
  });
});
