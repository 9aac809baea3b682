/**
 * Graceful shutdown of `agent-context serve`, run as users run it: SIGTERM stops accepting connections,
 * lets the request in flight finish (and charge), flushes the store and exits 0; a request that outlasts
 * AC_SHUTDOWN_TIMEOUT_MS is cut off and the process still exits 0 with the store intact.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../fakes/fake-upstream.js';
import { FORECAST_PARIS, GEOCODING_PARIS } from '../fixtures/live/open-meteo.js';
import { type SpawnedServer, spawnServe } from '../helpers/spawn-serve.js';
import { request } from '../helpers/test-server.js';

/** Whether a new TCP connection to the server's port is refused. */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('graceful shutdown of serve', () => {
  let upstream: FakeUpstream;
  const dirs: string[] = [];
  const children: SpawnedServer[] = [];

  beforeAll(async () => {
    upstream = await startFakeUpstream({
      '/v1/search': { json: GEOCODING_PARIS },
      '/v1/forecast': { json: FORECAST_PARIS, delayMs: 1500 },
    });
  });
  afterAll(async () => {
    for (const c of children) if (c.child.exitCode === null) c.child.kill('SIGKILL');
    await upstream.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  async function serve(dataDir: string, env: Record<string, string> = {}): Promise<SpawnedServer> {
    const spawned = await spawnServe({
      DATA_DIR: dataDir,
      AC_OPEN_METEO_GEOCODING_URL: upstream.url,
      AC_OPEN_METEO_FORECAST_URL: upstream.url,
      AC_WEATHER_PROVIDERS: 'open-meteo',
      AC_UPSTREAM_TIMEOUT_MS: '20000',
      AC_LOG_FORMAT: 'json',
      ...env,
    });
    children.push(spawned);
    return spawned;
  }

  async function freshDir(): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'ac-shutdown-'));
    dirs.push(dir);
    return dir;
  }

  async function register(url: string): Promise<string> {
    const res = await request(url, 'POST', '/api/ac/register', { body: { email: 'drain@example.com' } });
    expect(res.status, res.text).toBe(200);
    return res.body.agent_key as string;
  }

  /** Starts a weather request and resolves once the server is waiting on the slow forecast upstream. */
  async function slowWeather(url: string, key: string, query: string) {
    const seen = upstream.requests.filter((r) => r.path === '/v1/forecast').length;
    const pending = request(url, 'POST', '/api/ac/data', {
      key,
      body: { agent_key: key, query_type: 'weather', query, cache_minutes: 0 },
    }).then(
      (res) => ({ res, error: undefined }),
      (error: unknown) => ({ res: undefined, error }),
    );
    await until(
      () => upstream.requests.filter((r) => r.path === '/v1/forecast').length > seen,
      'the forecast call',
    );
    return { pending }; // wrapped: an async function returning the promise itself would wait for it
  }

  it('SIGTERM: refuses new connections, finishes the request in flight, exits 0; the charge survives', async () => {
    const dataDir = await freshDir();
    const first = await serve(dataDir);
    const key = await register(first.url);

    const { pending } = await slowWeather(first.url, key, 'Paris');
    first.child.kill('SIGTERM');
    await until(() => first.stderr().includes('shutting down'), 'the shutdown log line');
    expect(await refused(first.url)).toBe(true);

    const { res, error } = await pending;
    expect(error).toBeUndefined();
    expect(res?.status, res?.text).toBe(200);
    expect(res?.body).toMatchObject({
      success: true,
      from_cache: false,
      cost_cents: 2,
      credit_balance_cents: 48,
    });
    expect(res?.headers.get('connection')).toBe('close');
    expect(await first.exited).toBe(0);
    expect(first.stderr()).not.toMatch(/"level":(50|60)/); // no error or fatal line

    const second = await serve(dataDir);
    const ledger = await request(second.url, 'GET', '/api/ac/account/transactions', { key });
    expect(ledger.status, ledger.text).toBe(200);
    expect(ledger.body.credit_balance_cents).toBe(48);
    expect(ledger.body.transactions[0]).toMatchObject({ operation: 'data', amount_cents: -2 });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('a request outlasting AC_SHUTDOWN_TIMEOUT_MS is cut off; the process still exits 0, the store intact', async () => {
    upstream.route('/v1/forecast', { json: FORECAST_PARIS, delayMs: 8000 });
    const dataDir = await freshDir();
    const first = await serve(dataDir, { AC_SHUTDOWN_TIMEOUT_MS: '300' });
    const key = await register(first.url);

    const { pending } = await slowWeather(first.url, key, 'Paris');
    const signalled = Date.now();
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // Well before the upstream's 8 s: the bound, not the request, ended the wait.
    expect(Date.now() - signalled).toBeLessThan(6000);
    const { res, error } = await pending;
    expect(res).toBeUndefined();
    expect(error).toBeDefined();
    expect(first.stderr()).toContain('cut off');

    const second = await serve(dataDir);
    const account = await request(second.url, 'GET', '/api/ac/account', { key });
    expect(account.status, account.text).toBe(200);
    expect(account.body.credit_balance_cents).toBe(50);
    const again = await request(second.url, 'POST', '/api/ac/register', {
      body: { email: 'drain@example.com' },
    });
    expect(again.status).toBe(409);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
