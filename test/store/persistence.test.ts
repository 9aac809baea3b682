/** Data survives restarts; one writer per DATA_DIR; stale locks are recovered; a bad file stops start-up. */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  acquireDataDirLock,
  DataDirLockedError,
  isProcessAlive,
  LOCK_FILE,
  readLockHolder,
} from '../../src/store/json/data-dir-lock.js';
import { openJsonFileStore, STORE_FILE, StoreFileError } from '../../src/store/json/json-file-store.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { ledgerSum, ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

const holder = (command = 'test') => ({ pid: process.pid, command, startedAt: new Date().toISOString() });

describe('persistence and the DATA_DIR lock', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const tempDir = async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'ac-persist-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  };

  it('keeps accounts, keys, memories and the ledger across a restart', async () => {
    const dataDir = await tempDir();
    let server: TestServer = await startTestServer({ dataDir, live: new FakeLiveSource() });
    const key = await server.register('persist@example.com');
    await server.request('POST', '/api/ac/memory', {
      key,
      body: {
        agent_key: key,
        memory_key: 'plan',
        memory_value: 'ship it',
        memory_type: 'workflow',
        metadata: { step: 3 },
      },
    });
    await server.request('POST', '/api/ac/data', {
      key,
      body: { agent_key: key, query_type: 'news', query: 'x' },
    });
    const before = await server.request('GET', '/api/ac/account/transactions', { key });
    await server.stop();

    server = await startTestServer({ dataDir, live: new FakeLiveSource() });
    cleanups.push(() => server.stop());
    const res = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'plan' },
    });
    expect(res.status).toBe(200);
    expect(res.body.memory).toMatchObject({
      memory_value: 'ship it',
      memory_type: 'workflow',
      metadata: { step: 3 },
    });
    expect(res.body.credit_balance_cents).toBe(50 - 1 - 2 - 1);
    const after = await server.request('GET', '/api/ac/account/transactions', { key });
    expect(after.body.transactions.slice(1)).toEqual(before.body.transactions);
    expect(await ledgerSum(server, key)).toBe(46);
    const again = await server.request('POST', '/api/ac/register', {
      body: { email: 'persist@example.com' },
    });
    expect(again.status).toBe(409);
  });

  it('a store written before memory versions existed loads each memory as version 1', async () => {
    const dataDir = await tempDir();
    let server: TestServer = await startTestServer({ dataDir });
    const key = await server.register('old@example.com');
    const body = { agent_key: key, memory_key: 'old', memory_value: 'from before' };
    await server.request('POST', '/api/ac/memory', { key, body });
    await server.stop();
    // What an older release wrote: the same snapshot without `version` on its memories.
    const file = path.join(dataDir, STORE_FILE);
    const snapshot = JSON.parse(await readFile(file, 'utf8'));
    expect(snapshot.memories[0].version).toBe(1);
    for (const memory of snapshot.memories) delete memory.version;
    await writeFile(file, JSON.stringify(snapshot));

    server = await startTestServer({ dataDir });
    cleanups.push(() => server.stop());
    const read = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'old' },
    });
    expect(read.body.memory).toMatchObject({ memory_value: 'from before', version: 1 });
    expect(read.headers.get('etag')).toBe('"1"');
    const next = await server.request('POST', '/api/ac/memory', {
      key,
      body: { ...body, memory_value: 'now' },
      headers: { 'If-Match': '"1"' },
    });
    expect(next.body.memory.version).toBe(2);
  });

  it('keeps an expiry and its refresh (journaled in place) across a restart, and the list order', async () => {
    const dataDir = await tempDir();
    const clock = new ManualClock(Date.parse('2026-11-23T00:00:00.000Z'));
    let server: TestServer = await startTestServer({ dataDir, clock });
    const key = await server.register('expiry@example.com');
    const store = (memoryKey: string, extra = {}) =>
      server.request('POST', '/api/ac/memory', {
        key,
        body: { agent_key: key, memory_key: memoryKey, memory_value: 'v', ...extra },
      });
    await store('brief', { ttl_seconds: 100 });
    clock.advance(1_000);
    await store('later');
    clock.advance(50_000);
    const refreshed = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'brief', refresh_on_read: 'true' },
    });
    expect(refreshed.body.memory.expires_at).toBe('2026-11-23T00:02:31.000Z');
    await server.stop();

    server = await startTestServer({ dataDir, clock });
    cleanups.push(() => server.stop());
    const read = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'brief' },
    });
    expect(read.body.memory).toMatchObject({ expires_at: '2026-11-23T00:02:31.000Z', version: 1 });
    const list = await server.request('POST', '/api/ac/memory/search', { key, body: { agent_key: key } });
    expect(list.body.memories.map((m: { memory_key: string }) => m.memory_key)).toEqual(['later', 'brief']);
  });

  it('stores keys only as hashes', async () => {
    const dataDir = await tempDir();
    const server = await startTestServer({ dataDir, live: new FakeLiveSource() });
    const key = await server.register();
    await server.stop();
    const file = await readFile(path.join(dataDir, STORE_FILE), 'utf8');
    expect(file).not.toContain(key);
    expect(file).not.toContain(key.slice(3, 20));
  });

  it('refuses a second writer, naming the running server', async () => {
    const dataDir = await tempDir();
    const server = await startTestServer({ dataDir, live: new FakeLiveSource() });
    cleanups.push(() => server.stop());
    const lock = JSON.parse(await readFile(path.join(dataDir, LOCK_FILE), 'utf8'));
    expect(lock).toMatchObject({ pid: process.pid, command: 'serve', url: server.url });
    // Same pid counts as ours, so pretend the lock is held by another live process: our parent.
    await writeFile(path.join(dataDir, LOCK_FILE), JSON.stringify({ ...lock, pid: process.ppid }));
    const err = await openJsonFileStore(dataDir, holder()).catch((e) => e);
    expect(err).toBeInstanceOf(DataDirLockedError);
    expect(err.message).toContain(`pid ${process.ppid}`);
    expect(err.message).toContain(server.url);
    expect(err.message).toContain('agent-context serve');
  });

  it('never shows a reader an empty or half-written lock while its holder rewrites it', async () => {
    const dataDir = await tempDir();
    const lock = await acquireDataDirLock(dataDir, holder('serve'));
    let reads = 0;
    let missing = 0;
    let writing = true;
    const reader = (async () => {
      while (writing) {
        reads++;
        if ((await readLockHolder(dataDir))?.pid !== process.pid) missing++;
      }
    })();
    for (let i = 0; i < 200; i++) {
      await lock.update({ ...holder('serve'), url: `http://127.0.0.1:${10_000 + i}` });
    }
    writing = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect(missing).toBe(0);
    expect((await readLockHolder(dataDir))?.url).toBe('http://127.0.0.1:10199');
    await lock.release();
  });

  it('takes over a lock left by a dead process', async () => {
    const dataDir = await tempDir();
    const child = spawn(process.execPath, ['-e', '']);
    const pid = child.pid as number;
    await new Promise((r) => child.on('exit', r));
    await writeFile(
      path.join(dataDir, LOCK_FILE),
      JSON.stringify({ pid, command: 'serve', startedAt: 'then' }),
    );
    const { store } = await openJsonFileStore(dataDir, holder());
    expect(JSON.parse(await readFile(path.join(dataDir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    await store.close();
  });

  it('treats a zombie holder as dead', async () => {
    const dataDir = await tempDir();
    // The short sleep's parent shell is replaced by a long `sleep`, which never reaps it: once it
    // exits, it stays a zombie until the long sleep ends.
    const sh = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 4']);
    cleanups.push(async () => {
      sh.kill('SIGKILL');
    });
    const zombie = Number(await new Promise<string>((r) => sh.stdout.once('data', (d) => r(String(d)))));
    expect(isProcessAlive(zombie)).toBe(true);
    await new Promise((r) => setTimeout(r, 600));
    expect(await readFile(`/proc/${zombie}/status`, 'utf8')).toMatch(/State:\s+Z/);
    expect(isProcessAlive(zombie)).toBe(false);
    await writeFile(
      path.join(dataDir, LOCK_FILE),
      JSON.stringify({ pid: zombie, command: 'mcp', startedAt: 'then' }),
    );
    const { store } = await openJsonFileStore(dataDir, holder());
    await store.close();
  });

  it('stops with a clear message on a store file that is not JSON or not ours', async () => {
    const dataDir = await tempDir();
    await writeFile(path.join(dataDir, STORE_FILE), '{"half": ');
    const err = await openJsonFileStore(dataDir, holder()).catch((e) => e);
    expect(err).toBeInstanceOf(StoreFileError);
    expect(err.message).toMatch(/could not be read as JSON/);
    await writeFile(path.join(dataDir, STORE_FILE), '{"something": "else"}');
    const other = await openJsonFileStore(dataDir, holder()).catch((e) => e);
    expect(other.message).toMatch(/not an agent-context store/);
    // The failed opens released the lock: with the bad file moved away, the store opens.
    await rm(path.join(dataDir, STORE_FILE));
    const { store } = await openJsonFileStore(dataDir, holder());
    await store.close();
  });
});
