/**
 * Starts the real HTTP server on a free loopback port with a fresh temporary DATA_DIR, and gives tests a
 * small client for it. Never touches the repository's data/.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import type { Clock } from '../../src/core/clock.js';
import type { LiveDataSource } from '../../src/core/live-port.js';
import { type RunningServer, startServer } from '../../src/http/http-server.js';
import { openService, type Service } from '../../src/service.js';
import { testDatabase } from './postgres.js';

export { ManualClock } from './manual-clock.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface RequestOptions {
  key?: string;
  bearer?: string;
  body?: unknown;
  rawBody?: string;
  contentType?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface TestServer {
  url: string;
  dataDir: string;
  running: RunningServer<Service>;
  request(method: string, path: string, options?: RequestOptions): Promise<ApiResponse>;
  /** Registers a fresh account and returns its key. */
  register(email?: string): Promise<string>;
  /** Stops the server, keeping DATA_DIR (for restart tests). */
  stop(): Promise<void>;
  /** Stops the server and removes DATA_DIR. */
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  clock?: Clock;
  live?: LiveDataSource;
  dataDir?: string;
}

let emails = 0;

export async function request(base: string, method: string, pathname: string, options: RequestOptions = {}) {
  const url = new URL(pathname, base);
  for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.append(k, v);
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
  const res = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed as any, text };
}

/**
 * Whether this run's servers are on PostgreSQL (AC_TEST_STORE=postgres), where /mcp is stateless: no
 * sessions, so "initialize first" and session checks do not apply.
 */
export const ON_POSTGRES = process.env.AC_TEST_STORE === 'postgres';

/** For AC_TEST_STORE=postgres: the database standing in for each DATA_DIR. */
const databaseOfDataDir = new Map<string, string>();

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), 'ac-test-')));
  // AC_TEST_STORE=postgres runs a suite's servers on PostgreSQL, each on a fresh database of its own (the
  // same one again when a test restarts a server on its DATA_DIR).
  let onPostgres = {};
  if (ON_POSTGRES) {
    let url = databaseOfDataDir.get(dataDir);
    if (url === undefined) {
      url = (await testDatabase({ label: 'server' })).url;
      databaseOfDataDir.set(dataDir, url);
    }
    onPostgres = { DATABASE_URL: url, DATA_DIR: '' };
  }
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    AC_LOG_LEVEL: 'silent',
    AC_RATE_LIMIT: 'off',
    ...onPostgres,
    ...options.env,
  });
  const service = await openService(config, {
    command: 'serve',
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.live ? { live: options.live } : {}),
  });
  const running = await startServer(service, { command: 'serve' });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await running.close();
  };
  const server: TestServer = {
    url: running.url,
    dataDir,
    running,
    request: (method, p, o) => request(running.url, method, p, o),
    register: async (email) => {
      const res = await server.request('POST', '/api/ac/register', {
        body: { email: email ?? `agent${++emails}-${process.pid}@example.com` },
      });
      if (res.status !== 200) throw new Error(`register failed: ${res.text}`);
      return res.body.agent_key as string;
    },
    stop,
    close: async () => {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Sums the ledger of an account as the API shows it. */
export async function ledgerSum(server: TestServer, key: string): Promise<number> {
  const res = await server.request('GET', '/api/ac/account/transactions', { key, query: { limit: '100' } });
  return (res.body.transactions as { amount_cents: number }[]).reduce((sum, e) => sum + e.amount_cents, 0);
}
