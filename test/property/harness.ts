/**
 * The driver of the ledger property tests: the real service (core and store) called the way the REST and
 * MCP faces call it (authenticate, `parseInput`, `runOperation`), with a scripted upstream whose answers
 * fast-check's scheduler releases in the order it chooses. The store is one of the two adapters (a
 * `StoreBackend`): the JSON file store in a temporary DATA_DIR, or PostgreSQL on a database of the run's
 * shared cluster. It can restart the service cleanly, or "crash" it, and it dumps the whole store for
 * comparisons. A crash of the file store copies DATA_DIR while the service runs (so the copy holds an
 * un-compacted journal) and opens the copy; on PostgreSQL a second service opens the same database while
 * the first still runs, and only then is the first shut down, as when another instance takes over the
 * traffic of one that dies: what was acknowledged is committed, so the second sees all of it.
 */
import { copyFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Scheduler } from 'fast-check';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { AppError, type ErrorCode, type ErrorDetails } from '../../src/core/errors.js';
import type { LiveDataSource } from '../../src/core/live-port.js';
import type {
  Account,
  IdempotencyRecord,
  JsonObject,
  LedgerEntry,
  Memory,
  MemoryVersion,
} from '../../src/core/model.js';
import { runOperation } from '../../src/core/run-operation.js';
import { fieldsOf, parseInput } from '../../src/core/validation.js';
import { openService, type Service } from '../../src/service.js';
import { JOURNAL_FILE, STORE_FILE } from '../../src/store/json/json-file-store.js';
import type { Snapshot } from '../../src/store/json/json-state.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { testDatabase } from '../helpers/postgres.js';
import type { ManualClock } from '../helpers/test-server.js';

/** How the upstream answers a (normalised) query: data, or one of the failures a provider chain reports. */
export type Health = 'ok' | 'upstream_failed' | 'upstream_timeout' | 'not_found';

export type Outcome =
  | { ok: true; body: JsonObject; replayed: boolean }
  | { ok: false; code: ErrorCode | 'not_an_app_error'; details: ErrorDetails; message: string };

/** Everything the store holds about the e-mail pool's accounts and the idempotency-key pool. */
export interface Dump {
  /** By e-mail; null when no account has it. */
  accounts: Record<string, Account | null>;
  /** By agent id, most recently updated first. */
  memories: Record<string, Memory[]>;
  /** By agent id, oldest first. */
  ledger: Record<string, LedgerEntry[]>;
  /** By `${agentId} ${idempotencyKey}`. */
  idempotency: Record<string, IdempotencyRecord>;
  /** By agent id and memory key: the newest version in the key's history (deletes included), if any. */
  lastVersions: Record<string, Record<string, number>>;
  /** By agent id and memory key: the key's history as kept, newest first (deletes included). */
  histories: Record<string, Record<string, MemoryVersion[]>>;
}

/** The memory keys the scenarios use. */
export const MEMORY_KEYS = ['a', 'b', 'c', 'z'];

export interface Request {
  op: string;
  /** The API key presented, for agent operations. */
  key?: string;
  input: Record<string, unknown>;
  idempotencyKey?: string;
}

/** How many records of each kind the store's durable form holds (the snapshot file, or the tables). */
export interface Persisted {
  accounts: number;
  ledger: number;
  memories: number;
  idempotency: number;
  /** Entries of memory histories (delete markers included). */
  history: number;
  /** Idempotency claims still held (PostgreSQL: rows in state 'running'); none after a clean shutdown. */
  claims: number;
  /** The journal's size (JSON file store); undefined where there is none. */
  journalBytes?: number;
}

/**
 * Where a harness keeps its store: one of the two adapters behind the store port. A backend hands out
 * places, each an empty store for one scenario.
 */
export interface StoreBackend {
  readonly name: string;
  /**
   * Whether the live-data cache is kept in the store, so that it outlives a restart of the service (and is
   * shared with a second instance): PostgreSQL's `live_cache` table; the file store's cache is in memory.
   */
  readonly liveCacheInStore: boolean;
  /** An empty store for one scenario. */
  place(): Promise<StorePlace>;
  /** Frees what the backend holds (a database); places must be closed first. */
  dispose(): Promise<void>;
}

export interface StorePlace {
  /** The configuration that opens the store here (DATA_DIR, or DATABASE_URL). */
  env: Record<string, string>;
  /** What the store holds durably, read without the service (which is shut down when this is called). */
  persisted(): Promise<Persisted>;
  /**
   * A place whose store holds what this one's holds now, read while the service still runs: a copy of
   * DATA_DIR (snapshot and journal, not the lock), or the same database. `journalBytes`: what the copy's
   * journal holds.
   */
  crashCopy(): Promise<{ place: StorePlace; journalBytes?: number }>;
  close(): Promise<void>;
}

/** The JSON file store, in a temporary DATA_DIR per place. */
export function fileBackend(): StoreBackend {
  const dirPlace = (dataDir: string): StorePlace => ({
    env: { DATA_DIR: dataDir },
    persisted: async () => {
      const snapshot = JSON.parse(await readFile(path.join(dataDir, STORE_FILE), 'utf8')) as Snapshot;
      return {
        accounts: snapshot.accounts.length,
        ledger: snapshot.ledger.length,
        memories: snapshot.memories.length,
        idempotency: (snapshot.idempotency ?? []).length,
        history: (snapshot.history ?? []).length,
        claims: 0, // held in the process only
        journalBytes: await fileSize(path.join(dataDir, JOURNAL_FILE)),
      };
    },
    crashCopy: async () => {
      const copy = await mkdtemp(path.join(tmpdir(), 'ac-prop-crash-'));
      for (const file of [STORE_FILE, JOURNAL_FILE]) {
        await copyFile(path.join(dataDir, file), path.join(copy, file)).catch(
          (err: NodeJS.ErrnoException) => {
            if (err.code !== 'ENOENT') throw err;
          },
        );
      }
      return { place: dirPlace(copy), journalBytes: await fileSize(path.join(copy, JOURNAL_FILE)) };
    },
    close: () => rm(dataDir, { recursive: true, force: true }),
  });
  return {
    name: 'JSON file store',
    liveCacheInStore: false,
    place: async () => dirPlace(await mkdtemp(path.join(tmpdir(), 'ac-prop-'))),
    dispose: async () => {},
  };
}

/** The tables a scenario writes, children first (foreign keys), emptied before each scenario. */
const TABLES = [
  'ledger',
  'memories',
  'memory_history',
  'live_usage',
  'idempotency',
  'live_cache',
  'live_flights',
  'rate_limits',
  'accounts',
];

/**
 * PostgreSQL: one migrated database of the shared cluster (test/helpers/postgres.ts) for all the places
 * of a backend, emptied for each place (a place per scenario, one scenario at a time), which is much
 * faster than a database per scenario.
 */
export function postgresBackend(label = 'property'): StoreBackend {
  let database: Promise<{ url: string; admin: pg.Client }> | undefined;
  let inUse = false;
  const connect = () => {
    database ??= (async () => {
      const { url } = await testDatabase({ label });
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      return { url, admin };
    })();
    return database;
  };
  const count = async (admin: pg.Client, sql: string) => Number((await admin.query(sql)).rows[0].n);
  return {
    name: 'PostgreSQL',
    liveCacheInStore: true,
    place: async () => {
      if (inUse) throw new Error('postgresBackend: one place at a time (close the last one first)');
      inUse = true;
      const { url, admin } = await connect();
      await admin.query(TABLES.map((table) => `DELETE FROM ${table}`).join('; '));
      const place: StorePlace = {
        env: { DATABASE_URL: url, DATA_DIR: '' },
        persisted: async () => ({
          accounts: await count(admin, 'SELECT count(*) AS n FROM accounts'),
          ledger: await count(admin, 'SELECT count(*) AS n FROM ledger'),
          memories: await count(admin, 'SELECT count(*) AS n FROM memories'),
          idempotency: await count(admin, "SELECT count(*) AS n FROM idempotency WHERE state = 'done'"),
          history: await count(admin, 'SELECT count(*) AS n FROM memory_history'),
          claims: await count(admin, "SELECT count(*) AS n FROM idempotency WHERE state = 'running'"),
        }),
        // Whatever was acknowledged is committed: another instance on the database sees it.
        crashCopy: async () => ({ place }),
        close: async () => {
          inUse = false;
        },
      };
      return place;
    },
    dispose: async () => {
      if (!database) return;
      const { admin } = await database;
      database = undefined;
      await admin.end();
    },
  };
}

export interface Harness {
  readonly service: Service;
  /** Upstream calls so far (across restarts). */
  readonly fetches: number;
  /** Upstream calls so far that returned data. */
  readonly answered: number;
  /** Sets how the upstream answers `normalizedQuery` from now on. */
  setHealth(normalizedQuery: string, health: Health): void;
  call(request: Request): Promise<Outcome>;
  dump(): Promise<Dump>;
  /**
   * Clean shutdown (on the file store: journal folded into the snapshot) and a fresh start on the same
   * store. Returns what the store held durably while the service was down.
   */
  restart(): Promise<Persisted>;
  /**
   * Opens a new service on a copy of the store taken while the service runs (see `StorePlace.crashCopy`),
   * and shuts the old one down. Returns the size of the copied journal, where there is one.
   */
  crashCopy(): Promise<number | undefined>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  scheduler: Scheduler;
  clock: ManualClock;
  backend: StoreBackend;
  env?: Record<string, string>;
}

export async function openHarness(options: HarnessOptions): Promise<Harness> {
  const health = new Map<string, Health>();
  const fake = new FakeLiveSource();
  let answered = 0;
  fake.next = async (type, query) => {
    const h = health.get(query) ?? 'ok';
    if (h !== 'ok') throw new AppError(h, `fake ${h} for ${query}`);
    answered++;
    return {
      data: { type, echo: query, n: fake.calls.length },
      source: 'fake',
      asOf: '2026-11-21T11:00:00.000Z',
    };
  };
  // Every upstream answer (data or failure) arrives when the scheduler releases it.
  const live: LiveDataSource = {
    fetch: (type, query) => options.scheduler.schedule(fake.fetch(type, query), `upstream ${type}:${query}`),
  };

  const places = new Set<StorePlace>();
  const open = async (place: StorePlace) =>
    openService(loadConfig({ ...place.env, AC_LOG_LEVEL: 'silent', AC_RATE_LIMIT: 'off', ...options.env }), {
      command: 'test',
      live,
      clock: options.clock,
    });
  let place = await options.backend.place();
  places.add(place);
  let service: Service;
  try {
    service = await open(place);
  } catch (err) {
    await place.close();
    throw err;
  }
  let closed = false;

  async function call(request: Request): Promise<Outcome> {
    const { core, operations } = service;
    try {
      const op = operations.find((o) => o.name === request.op);
      if (!op) throw new Error(`no operation ${request.op}`);
      // As the faces do: authenticate first, then validate, then run through the idempotency records.
      const agentId = op.auth === 'agent' ? (await core.accounts.authenticate(request.key)).id : undefined;
      const input = parseInput(op.input, request.input, fieldsOf(op.input));
      const outcome = await runOperation(core, op, agentId, input, request.idempotencyKey);
      // A copy as it was returned: later changes to a stored object must not make a comparison pass.
      return { ok: true, body: structuredClone(outcome.body), replayed: outcome.replayed };
    } catch (err) {
      if (err instanceof AppError)
        return { ok: false, code: err.code, details: err.details, message: err.message };
      return {
        ok: false,
        code: 'not_an_app_error',
        details: {},
        message: String((err as Error)?.stack ?? err),
      };
    }
  }

  return {
    get service() {
      return service;
    },
    get fetches() {
      return fake.calls.length;
    },
    get answered() {
      return answered;
    },
    setHealth: (query, h) => {
      health.set(query, h);
    },
    call,
    dump: () => dumpStore(service),
    restart: async () => {
      await service.close();
      const persisted = await place.persisted();
      service = await open(place);
      return persisted;
    },
    crashCopy: async () => {
      const copy = await place.crashCopy();
      places.add(copy.place);
      const old = service;
      service = await open(copy.place);
      place = copy.place;
      await old.close();
      return copy.journalBytes;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        await service.close();
      } finally {
        for (const p of places) await p.close();
      }
    },
  };
}

function fileSize(file: string): Promise<number> {
  return stat(file).then(
    (s) => s.size,
    () => 0,
  );
}

export const EMAILS = [
  'agent0@example.com',
  'agent1@example.com',
  'agent2@example.com',
  'agent3@example.com',
];
/** Never registered: a top-up for it is 404. */
export const UNKNOWN_EMAIL = 'nobody@example.com';
export const IDEMPOTENCY_KEYS = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'];

const ALL = Number.MAX_SAFE_INTEGER;

/** The store's content for every e-mail of the pool and every idempotency key of the pool. */
export function dumpStore(service: Service): Promise<Dump> {
  return service.store.read(async (reader) => {
    const dump: Dump = {
      accounts: {},
      memories: {},
      ledger: {},
      idempotency: {},
      lastVersions: {},
      histories: {},
    };
    for (const email of [...EMAILS, UNKNOWN_EMAIL]) {
      const account = (await reader.findAccountByEmail(email)) ?? null;
      dump.accounts[email] = account;
      if (!account) continue;
      dump.memories[account.id] = await reader.listMemories(account.id, { limit: ALL });
      dump.ledger[account.id] = (await reader.listLedger(account.id, ALL)).reverse();
      const last: Record<string, number> = {};
      const histories: Record<string, MemoryVersion[]> = {};
      for (const key of MEMORY_KEYS) {
        const versions = await reader.listMemoryVersions(account.id, key, ALL);
        if (versions.length === 0) continue;
        histories[key] = versions;
        last[key] = (versions[0] as MemoryVersion).version;
      }
      dump.lastVersions[account.id] = last;
      dump.histories[account.id] = histories;
      for (const key of IDEMPOTENCY_KEYS) {
        const record = await reader.getIdempotency(account.id, key);
        if (record) dump.idempotency[`${account.id} ${key}`] = record;
      }
    }
    return structuredClone(dump);
  });
}
