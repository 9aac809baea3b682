/**
 * The driver of the ledger property tests: the real service (core, JSON-file store, journal) in a temporary
 * DATA_DIR, called the way the REST and MCP faces call it (authenticate, `parseInput`, `runOperation`), with
 * a scripted upstream whose answers fast-check's scheduler releases in the order it chooses. It can restart
 * the service cleanly, or "crash" it (copy DATA_DIR while the service runs, so the copy holds an
 * un-compacted journal, and open the copy), and it dumps the whole store for comparisons.
 */
import { copyFile, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Scheduler } from 'fast-check';
import { loadConfig } from '../../src/config.js';
import { AppError, type ErrorCode, type ErrorDetails } from '../../src/core/errors.js';
import type { LiveDataSource } from '../../src/core/live-port.js';
import type { Account, IdempotencyRecord, JsonObject, LedgerEntry, Memory } from '../../src/core/model.js';
import { runOperation } from '../../src/core/run-operation.js';
import { fieldsOf, parseInput } from '../../src/core/validation.js';
import { openService, type Service } from '../../src/service.js';
import { JOURNAL_FILE, STORE_FILE } from '../../src/store/json-file-store.js';
import type { Snapshot } from '../../src/store/store-state.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
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
}

export interface Request {
  op: string;
  /** The API key presented, for agent operations. */
  key?: string;
  input: Record<string, unknown>;
  idempotencyKey?: string;
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
   * Clean shutdown (journal folded into the snapshot) and a fresh start on the same DATA_DIR. Returns the
   * snapshot file and the journal's size as the shutdown left them.
   */
  restart(): Promise<{ snapshot: Snapshot; journalBytes: number }>;
  /**
   * Copies DATA_DIR (snapshot and journal, not the lock) while the service runs, opens the copy as the new
   * service, and shuts the old one down. Returns the size of the copied journal.
   */
  crashCopy(): Promise<number>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  scheduler: Scheduler;
  clock: ManualClock;
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

  const dirs: string[] = [];
  const open = async (dataDir: string) =>
    openService(
      loadConfig({ DATA_DIR: dataDir, AC_LOG_LEVEL: 'silent', AC_RATE_LIMIT: 'off', ...options.env }),
      { command: 'test', live, clock: options.clock },
    );
  let dataDir = await mkdtemp(path.join(tmpdir(), 'ac-prop-'));
  dirs.push(dataDir);
  let service = await open(dataDir);
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
      const snapshot = JSON.parse(await readFile(path.join(dataDir, STORE_FILE), 'utf8')) as Snapshot;
      const journalBytes = await fileSize(path.join(dataDir, JOURNAL_FILE));
      service = await open(dataDir);
      return { snapshot, journalBytes };
    },
    crashCopy: async () => {
      const copy = await mkdtemp(path.join(tmpdir(), 'ac-prop-crash-'));
      dirs.push(copy);
      for (const file of [STORE_FILE, JOURNAL_FILE]) {
        await copyFile(path.join(dataDir, file), path.join(copy, file)).catch(
          (err: NodeJS.ErrnoException) => {
            if (err.code !== 'ENOENT') throw err;
          },
        );
      }
      const journalBytes = await fileSize(path.join(copy, JOURNAL_FILE));
      const old = service;
      service = await open(copy);
      dataDir = copy;
      await old.close();
      return journalBytes;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        await service.close();
      } finally {
        for (const dir of dirs) await rm(dir, { recursive: true, force: true });
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
    const dump: Dump = { accounts: {}, memories: {}, ledger: {}, idempotency: {} };
    for (const email of [...EMAILS, UNKNOWN_EMAIL]) {
      const account = (await reader.findAccountByEmail(email)) ?? null;
      dump.accounts[email] = account;
      if (!account) continue;
      dump.memories[account.id] = await reader.listMemories(account.id, { limit: ALL });
      dump.ledger[account.id] = (await reader.listLedger(account.id, ALL)).reverse();
      for (const key of IDEMPOTENCY_KEYS) {
        const record = await reader.getIdempotency(account.id, key);
        if (record) dump.idempotency[`${account.id} ${key}`] = record;
      }
    }
    return structuredClone(dump);
  });
}
