/**
 * The authorization server's records (src/store/oauth-records.ts): one behaviour suite run against both
 * adapters, `oauth.json` in a fresh temporary DATA_DIR and the `oauth_records` table on a database of the
 * run's PostgreSQL cluster, each with a clock the test moves by hand; "two instances" are, on PostgreSQL,
 * two pools on one database (on the JSON store, one process holds DATA_DIR: the same object twice). Then
 * what only one adapter has: the file's durability, coalesced writes, mode and damage; the table's
 * background sweep; and both as openStore hands them to the service.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DurableJsonFile } from '../../src/store/json/durable-json-file.js';
import { OAUTH_FILE, openJsonOAuthRecords } from '../../src/store/json/json-oauth-records.js';
import { MAX_PAYLOAD_BYTES, type OAuthRecord, type OAuthRecords } from '../../src/store/oauth-records.js';
import { openStore } from '../../src/store/open-store.js';
import { openPostgresStore } from '../../src/store/postgres/open-postgres-store.js';
import { PostgresOAuthRecords } from '../../src/store/postgres/postgres-oauth-records.js';
import { PostgresSweeper } from '../../src/store/postgres/postgres-sweeper.js';
import { StoreOpenError } from '../../src/store/store-open-error.js';
import { type TestDatabase, testDatabase } from '../helpers/postgres.js';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const MINUTE = 60_000;
const holder = { pid: process.pid, command: 'test', startedAt: new Date().toISOString() };

/** The test's clock, epoch ms. */
class Clock {
  ms = T0;
  readonly now = () => this.ms;
}

const record = (kind: string, id: string, more: Partial<OAuthRecord> = {}): OAuthRecord => ({
  kind,
  id,
  payload: { kind, id, nested: { list: [1, 'two', null, true] } },
  ...more,
});

interface Opened {
  records: OAuthRecords;
  /** Another instance on the same store (PostgreSQL: its own pool). */
  other: OAuthRecords;
  clock: Clock;
}

interface Adapter {
  name: string;
  /** Once per adapter. */
  setup(): Promise<void>;
  open(): Promise<Opened>;
  /** After each test. */
  reset(): Promise<void>;
  teardown(): Promise<void>;
}

function jsonAdapter(): Adapter {
  const dirs: string[] = [];
  return {
    name: 'JSON file',
    setup: async () => {},
    open: async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'ac-oauth-'));
      dirs.push(dir);
      const clock = new Clock();
      const records = await openJsonOAuthRecords(dir, { now: clock.now });
      return { records, other: records, clock };
    },
    reset: async () => {
      for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
    },
    teardown: async () => {},
  };
}

function postgresAdapter(): Adapter {
  let db: TestDatabase;
  let admin: pg.Client;
  const pools: pg.Pool[] = [];
  return {
    name: 'PostgreSQL',
    setup: async () => {
      db = await testDatabase({ label: 'oauth_records' });
      admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
    },
    open: async () => {
      const clock = new Clock();
      const instance = () => {
        const pool = new pg.Pool({ connectionString: db.url, max: 4 });
        pools.push(pool);
        return new PostgresOAuthRecords(pool, { now: clock.now });
      };
      return { records: instance(), other: instance(), clock };
    },
    reset: async () => {
      for (const pool of pools.splice(0)) await pool.end();
      await admin.query('TRUNCATE oauth_records');
    },
    teardown: async () => {
      await admin?.end();
    },
  };
}

for (const adapter of [jsonAdapter(), postgresAdapter()]) {
  describe(`OAuth records: ${adapter.name}`, () => {
    beforeAll(() => adapter.setup());
    afterEach(() => adapter.reset());
    afterAll(() => adapter.teardown());

    it('puts and gets a record with every field; a missing one is undefined; what is read is a copy', async () => {
      const { records, other } = await adapter.open();
      const full = record('AccessToken', 'at-1', {
        expiresAt: T0 + MINUTE,
        grantId: 'g1',
        uid: 'u1',
        userCode: 'ABCD-EFGH',
        accountId: 'agt_1',
        consumedAt: T0 - 1,
        payload: { scope: 'memory', nul: 'a\u0000b', unicode: 'é😀', n: 1.5, none: null, gone: undefined },
      });
      await records.put(full);
      const { gone: _, ...kept } = full.payload;
      const expected = { ...full, payload: kept };
      expect(await records.get('AccessToken', 'at-1')).toEqual(expected);
      expect(await other.get('AccessToken', 'at-1')).toEqual(expected);
      expect(await records.get('AccessToken', 'at-2')).toBeUndefined();
      expect(await records.get('RefreshToken', 'at-1')).toBeUndefined();

      const minimal = record('Client', 'https://client.example/metadata.json');
      await records.put(minimal);
      const read = await other.get(minimal.kind, minimal.id);
      expect(read).toEqual(minimal);
      expect(Object.keys(read as object).sort()).toEqual(['id', 'kind', 'payload']);
      (read?.payload as { kind: string }).kind = 'changed';
      (full.payload as { scope: string }).scope = 'changed';
      expect((await records.get(minimal.kind, minimal.id))?.payload.kind).toBe('Client');
      expect((await records.get('AccessToken', 'at-1'))?.payload.scope).toBe('memory');
    });

    it('replaces a record by kind and id, indexes included', async () => {
      const { records, other } = await adapter.open();
      await records.put(
        record('Session', 's1', { uid: 'u-old', accountId: 'a', grantId: 'g', consumedAt: T0 }),
      );
      await other.put(record('Session', 's1', { uid: 'u-new', payload: { v: 2 } }));
      expect(await records.get('Session', 's1')).toEqual({
        kind: 'Session',
        id: 's1',
        uid: 'u-new',
        payload: { v: 2 },
      });
      expect(await records.findByUid('Session', 'u-old')).toBeUndefined();
      expect((await records.findByUid('Session', 'u-new'))?.id).toBe('s1');
      expect(await records.listByAccount('Session', 'a')).toEqual([]);
      expect(await records.deleteByGrant('g')).toBe(0);
      expect(await records.consume('Session', 's1')).toBe(true); // consumedAt went with the old record
    });

    it('a record expires at expiresAt by the clock: absent to every call from then on', async () => {
      const { records, other, clock } = await adapter.open();
      const fields = { uid: 'u', userCode: 'UC', accountId: 'a', grantId: 'g' };
      await records.put(record('AuthorizationCode', 'c1', { expiresAt: T0 + 1000, ...fields }));
      await records.put(
        record('AuthorizationCode', 'c2', { expiresAt: T0 + 1000, ...fields, uid: 'u2', userCode: 'UC2' }),
      );
      await records.put(record('Grant', 'forever', { accountId: 'a' }));
      clock.ms = T0 + 999;
      expect((await other.get('AuthorizationCode', 'c1'))?.expiresAt).toBe(T0 + 1000);
      expect((await other.findByUid('AuthorizationCode', 'u'))?.id).toBe('c1');
      expect(await other.listByAccount('AuthorizationCode', 'a')).toHaveLength(2);
      expect(await other.consume('AuthorizationCode', 'c2')).toBe(true);
      clock.ms = T0 + 1000;
      expect(await other.get('AuthorizationCode', 'c1')).toBeUndefined();
      expect(await other.findByUid('AuthorizationCode', 'u')).toBeUndefined();
      expect(await other.findByUserCode('AuthorizationCode', 'UC')).toBeUndefined();
      expect(await other.listByAccount('AuthorizationCode', 'a')).toEqual([]);
      expect(await other.consume('AuthorizationCode', 'c1')).toBe(false);
      expect(await other.get('Grant', 'forever')).toBeDefined();
      // Expired, not yet swept: a put of the same id makes it exist again.
      await records.put(record('AuthorizationCode', 'c1', { expiresAt: T0 + 2000 }));
      expect((await other.get('AuthorizationCode', 'c1'))?.expiresAt).toBe(T0 + 2000);
    });

    it('finds by uid and by user code within a kind', async () => {
      const { records, other } = await adapter.open();
      await records.put(record('Interaction', 'i1', { uid: 'same' }));
      await records.put(record('Session', 's1', { uid: 'same', userCode: 'WXYZ' }));
      await records.put(record('DeviceCode', 'd1', { userCode: 'WXYZ' }));
      expect((await other.findByUid('Interaction', 'same'))?.id).toBe('i1');
      expect((await other.findByUid('Session', 'same'))?.id).toBe('s1');
      expect(await other.findByUid('Grant', 'same')).toBeUndefined();
      expect(await other.findByUid('Session', 'other')).toBeUndefined();
      expect((await other.findByUserCode('DeviceCode', 'WXYZ'))?.id).toBe('d1');
      expect((await other.findByUserCode('Session', 'WXYZ'))?.id).toBe('s1');
      expect(await other.findByUserCode('DeviceCode', 'wxyz')).toBeUndefined();
      await records.delete('Session', 's1');
      expect(await other.findByUid('Session', 'same')).toBeUndefined();
      expect((await other.findByUid('Interaction', 'same'))?.id).toBe('i1');
    });

    it('consumes once: at the clock, then false; false for a missing record', async () => {
      const { records, other, clock } = await adapter.open();
      await records.put(record('AuthorizationCode', 'c', { expiresAt: T0 + MINUTE }));
      clock.ms = T0 + 5;
      expect(await other.consume('AuthorizationCode', 'c')).toBe(true);
      expect(await records.consume('AuthorizationCode', 'c')).toBe(false);
      expect(await records.get('AuthorizationCode', 'c')).toMatchObject({ consumedAt: T0 + 5 });
      expect(await records.consume('AuthorizationCode', 'missing')).toBe(false);
      expect(await records.consume('RefreshToken', 'c')).toBe(false);
    });

    it('of concurrent consumes, on two instances, exactly one wins', async () => {
      const { records, other } = await adapter.open();
      for (let round = 0; round < 10; round++) {
        await records.put(record('RefreshToken', `r${round}`));
        const outcomes = await Promise.all(
          Array.from({ length: 6 }, (_, n) => (n % 2 ? records : other).consume('RefreshToken', `r${round}`)),
        );
        expect(outcomes.filter(Boolean)).toHaveLength(1);
      }
    });

    it('deletes a record; deletes every record of a grant, of any kind, and counts them', async () => {
      const { records, other } = await adapter.open();
      await records.put(record('AccessToken', 'a1', { grantId: 'g1' }));
      await records.put(record('RefreshToken', 'r1', { grantId: 'g1' }));
      await records.put(record('AuthorizationCode', 'c1', { grantId: 'g1', expiresAt: T0 + 1 }));
      await records.put(record('AccessToken', 'a2', { grantId: 'g2' }));
      await records.put(record('Grant', 'g1'));
      expect(await other.deleteByGrant('g1')).toBe(3);
      expect(await records.get('AccessToken', 'a1')).toBeUndefined();
      expect(await records.get('RefreshToken', 'r1')).toBeUndefined();
      expect(await records.get('AuthorizationCode', 'c1')).toBeUndefined();
      expect(await records.get('AccessToken', 'a2')).toBeDefined();
      expect(await records.get('Grant', 'g1')).toBeDefined(); // its id is g1, not its grantId
      expect(await other.deleteByGrant('g1')).toBe(0);
      await other.delete('Grant', 'g1');
      await other.delete('Grant', 'never was');
      expect(await records.get('Grant', 'g1')).toBeUndefined();
    });

    it("lists an account's unexpired records of a kind, the newest put first", async () => {
      const { records, other, clock } = await adapter.open();
      await records.put(record('Grant', 'g1', { accountId: 'a' }));
      await records.put(record('Grant', 'g2', { accountId: 'a', expiresAt: T0 + 10 }));
      await records.put(record('Grant', 'g3', { accountId: 'a' }));
      await records.put(record('Grant', 'b1', { accountId: 'b' }));
      await records.put(record('Session', 's1', { accountId: 'a' }));
      const ids = async () => (await other.listByAccount('Grant', 'a')).map((r) => r.id);
      expect(await ids()).toEqual(['g3', 'g2', 'g1']);
      await records.put(record('Grant', 'g1', { accountId: 'a', payload: { again: true } }));
      expect(await ids()).toEqual(['g1', 'g3', 'g2']);
      await records.consume('Grant', 'g3'); // not a put: keeps its place
      expect(await ids()).toEqual(['g1', 'g3', 'g2']);
      clock.ms = T0 + 10;
      expect(await ids()).toEqual(['g1', 'g3']);
      expect((await other.listByAccount('Grant', 'a'))[0]?.payload).toEqual({ again: true });
      expect(await other.listByAccount('Session', 'b')).toEqual([]);
    });

    it('putIfAbsent keeps a live record, replaces an expired one, and stores one that is missing', async () => {
      const { records, other, clock } = await adapter.open();
      const mine = record('Secret', 'cookie-keys', { payload: { keys: ['mine'] } });
      expect(await records.putIfAbsent(mine)).toEqual(mine);
      const theirs = record('Secret', 'cookie-keys', { payload: { keys: ['theirs'] } });
      expect(await other.putIfAbsent(theirs)).toEqual(mine);
      expect(await other.get('Secret', 'cookie-keys')).toEqual(mine);

      const old = record('Secret', 'rotating', { expiresAt: T0 + 10, payload: { n: 1 }, consumedAt: T0 });
      await records.put(old);
      clock.ms = T0 + 9;
      expect(await other.putIfAbsent(record('Secret', 'rotating', { payload: { n: 2 } }))).toEqual(old);
      clock.ms = T0 + 10;
      const fresh = record('Secret', 'rotating', { expiresAt: T0 + 20, payload: { n: 3 } });
      expect(await other.putIfAbsent(fresh)).toEqual(fresh);
      expect(await records.get('Secret', 'rotating')).toEqual(fresh); // consumedAt gone with the old one
    });

    it('of concurrent putIfAbsents, on two instances, every one returns the same stored record', async () => {
      const { records, other } = await adapter.open();
      for (let round = 0; round < 10; round++) {
        const id = `jwks-${round}`;
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, n) =>
            (n % 2 ? records : other).putIfAbsent(record('Secret', id, { payload: { candidate: n } })),
          ),
        );
        const stored = await records.get('Secret', id);
        expect(stored).toBeDefined();
        for (const result of results) expect(result).toEqual(stored);
      }
    });

    it('sweeps expired records, counting them', async () => {
      const { records, other, clock } = await adapter.open();
      await records.put(record('AccessToken', 'a', { expiresAt: T0 + 10 }));
      await records.put(record('AccessToken', 'b', { expiresAt: T0 + 20 }));
      await records.put(record('Session', 'c', { expiresAt: T0 + 10, uid: 'u' }));
      await records.put(record('Client', 'd'));
      expect(await other.sweep()).toBe(0);
      clock.ms = T0 + 10;
      // The JSON store also drops expired records whenever it writes: sweep counts those still there.
      expect(await other.sweep()).toBe(2);
      expect(await other.sweep()).toBe(0);
      clock.ms = T0 - 1; // a clock set back does not bring swept records back
      expect(await records.get('AccessToken', 'a')).toBeUndefined();
      expect(await records.findByUid('Session', 'u')).toBeUndefined();
      expect(await records.get('AccessToken', 'b')).toBeDefined();
      expect(await records.get('Client', 'd')).toBeDefined();
    });

    it('refuses a record no store can keep, and finds nothing under a key no store can hold', async () => {
      const { records } = await adapter.open();
      await expect(records.put(record('K'.repeat(65), 'x'))).rejects.toThrow(/kind must be 1 to 64/);
      await expect(records.put(record('', 'x'))).rejects.toThrow(/kind/);
      await expect(records.put(record('Session', 'a\u0000b'))).rejects.toThrow(/id must be .* without NUL/);
      await expect(records.put(record('Session', 'x', { uid: '' }))).rejects.toThrow(/uid/);
      await expect(records.put(record('Session', 'x', { expiresAt: 1.5 }))).rejects.toThrow(/expiresAt/);
      await expect(
        records.put(record('Session', 'x', { payload: [] as unknown as Record<string, unknown> })),
      ).rejects.toThrow(/JSON object/);
      await expect(
        records.putIfAbsent(record('Session', 'x', { payload: { big: 'x'.repeat(MAX_PAYLOAD_BYTES) } })),
      ).rejects.toThrow(/at most/);
      const kept = record('Session', 'x', { payload: { big: 'x'.repeat(64 * 1024) } });
      await records.put(kept);
      expect(await records.get('Session', 'x')).toEqual(kept);
      expect(await records.get('Session', 'a\u0000b')).toBeUndefined();
      expect(await records.findByUid('Session', '\u0000')).toBeUndefined();
      expect(await records.findByUserCode('Session', 'x\u0000')).toBeUndefined();
      expect(await records.consume('Session', 'x\u0000')).toBe(false);
      expect(await records.deleteByGrant('\u0000')).toBe(0);
      expect(await records.listByAccount('Session', '\u0000')).toEqual([]);
      await records.delete('Session', '\u0000');
    });
  });
}

describe('OAuth records: the JSON file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-oauth-file-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const fresh = async (name: string) => {
    const sub = path.join(dir, name);
    await rm(sub, { recursive: true, force: true });
    await mkdir(sub);
    return sub;
  };

  it('a write that resolved is in the file: reopened without a close (a crash), every record is there, 0600', async () => {
    const sub = await fresh('durable');
    const clock = new Clock();
    const records = await openJsonOAuthRecords(sub, { now: clock.now });
    await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        records.put(record('AccessToken', `t${n}`, { accountId: 'a', grantId: `g${n % 5}`, uid: `u${n}` })),
      ),
    );
    await records.put(record('RefreshToken', 'r', { expiresAt: T0 + MINUTE }));
    expect(await records.consume('RefreshToken', 'r')).toBe(true);
    expect(await records.deleteByGrant('g0')).toBe(10);
    expect((await stat(path.join(sub, OAUTH_FILE))).mode & 0o777).toBe(0o600);

    const again = await openJsonOAuthRecords(sub, { now: clock.now });
    const ids = (await again.listByAccount('AccessToken', 'a')).map((r) => r.id);
    expect(ids).toHaveLength(40);
    expect(ids).toEqual((await records.listByAccount('AccessToken', 'a')).map((r) => r.id));
    expect((await again.findByUid('AccessToken', 'u7'))?.id).toBe('t7');
    expect(await again.get('AccessToken', 't5')).toBeUndefined(); // g0
    expect(await again.get('RefreshToken', 'r')).toMatchObject({ consumedAt: T0, expiresAt: T0 + MINUTE });
    expect(await again.consume('RefreshToken', 'r')).toBe(false);
  });

  it('coalesces the writes made while one is under way into one file write', async () => {
    const sub = await fresh('coalesced');
    const records = await openJsonOAuthRecords(sub);
    const writes = vi.spyOn(DurableJsonFile.prototype, 'writeText');
    try {
      await Promise.all(Array.from({ length: 100 }, (_, n) => records.put(record('Session', `s${n}`))));
      expect(writes.mock.calls.length).toBeGreaterThanOrEqual(1);
      expect(writes.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      writes.mockRestore();
    }
    const file = JSON.parse(await readFile(path.join(sub, OAUTH_FILE), 'utf8'));
    expect(file.records).toHaveLength(100);
  });

  it('drops expired records from the file when it writes; reopened, they stay expired by the clock', async () => {
    const sub = await fresh('expired');
    const clock = new Clock();
    const records = await openJsonOAuthRecords(sub, { now: clock.now });
    await records.put(record('AccessToken', 'short', { expiresAt: T0 + 10 }));
    await records.put(record('AccessToken', 'long', { expiresAt: T0 + 20 }));
    clock.ms = T0 + 10;
    await records.put(record('Client', 'c'));
    const ids = () =>
      readFile(path.join(sub, OAUTH_FILE), 'utf8').then((t) =>
        JSON.parse(t).records.map((r: OAuthRecord) => r.id),
      );
    expect(await ids()).toEqual(['long', 'c']);
    clock.ms = T0 + 20;
    const again = await openJsonOAuthRecords(sub, { now: clock.now });
    expect(await again.get('AccessToken', 'long')).toBeUndefined();
    expect(await again.sweep()).toBe(1);
    expect(await ids()).toEqual(['c']);
  });

  it('makes a file others could read owner-only when it opens it', async () => {
    const sub = await fresh('mode');
    const records = await openJsonOAuthRecords(sub);
    await records.put(record('Client', 'c'));
    await chmod(path.join(sub, OAUTH_FILE), 0o644);
    const again = await openJsonOAuthRecords(sub);
    expect((await stat(path.join(sub, OAUTH_FILE))).mode & 0o777).toBe(0o600);
    expect(await again.get('Client', 'c')).toBeDefined();
  });

  it('a damaged file stops the open with a StoreOpenError naming the file and what to do', async () => {
    const sub = await fresh('damaged');
    const file = path.join(sub, OAUTH_FILE);
    const cases: [string, RegExp][] = [
      ['{"format":"agent-context-oauth/1","records":[{"kind":"Session"', /could not be read as JSON/],
      ['', /could not be read as JSON/],
      ['null', /not a file of OAuth records/],
      ['{"format":"agent-context/1","accounts":[]}', /not a file of OAuth records/],
      ['{"format":"agent-context-oauth/1","records":[{"kind":"Session","id":"s","payload":7}]}', /record 1/],
    ];
    for (const [text, why] of cases) {
      await writeFile(file, text, { mode: 0o600 });
      const failure = await openJsonOAuthRecords(sub).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failure).toBeInstanceOf(StoreOpenError);
      const { message } = failure as Error;
      expect(message).toContain(file);
      expect(message).toMatch(why);
      expect(message).toMatch(/restore it from a backup, or move it aside/);
    }
  });

  it('after a file write fails, refuses every call until reopened, which reads what reached the disk', async () => {
    const sub = await fresh('failed');
    const records = await openJsonOAuthRecords(sub);
    await records.put(record('AccessToken', 'kept'));
    const writes = vi
      .spyOn(DurableJsonFile.prototype, 'writeText')
      .mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    try {
      await expect(records.delete('AccessToken', 'kept')).rejects.toThrow(/no space/);
      await expect(records.get('AccessToken', 'kept')).rejects.toThrow(
        /oauth\.json could not be written \(no space left on device\).*until a restart/,
      );
      await expect(records.put(record('AccessToken', 'more'))).rejects.toThrow(/until a restart/);
    } finally {
      writes.mockRestore();
    }
    const again = await openJsonOAuthRecords(sub);
    expect(await again.get('AccessToken', 'kept')).toBeDefined();
    expect(await again.get('AccessToken', 'more')).toBeUndefined();
  });

  it('refuses every call after close, which waits for the writes under way', async () => {
    const sub = await fresh('closed');
    const records = await openJsonOAuthRecords(sub);
    const put = records.put(record('Client', 'c'));
    await records.close();
    await put;
    expect(JSON.parse(await readFile(path.join(sub, OAUTH_FILE), 'utf8')).records).toHaveLength(1);
    await expect(records.get('Client', 'c')).rejects.toThrow(/closed/);
    await expect(records.put(record('Client', 'd'))).rejects.toThrow(/closed/);
  });
});

describe('OAuth records: the PostgreSQL table', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await testDatabase({ label: 'oauth_sweep' });
  });

  it('the background sweeper deletes expired records by its clock; openPostgresStore hands the records out', async () => {
    const now = new Date(T0);
    const { store, oauthRecords } = await openPostgresStore(
      { url: db.url, label: db.name, poolMax: 4, statementTimeoutMs: 5000 },
      { now: () => now },
    );
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    try {
      await oauthRecords.put(record('AccessToken', 'a', { expiresAt: T0 + 10 }));
      await oauthRecords.put(record('AccessToken', 'b', { expiresAt: T0 + 11 }));
      await oauthRecords.put(record('Client', 'c'));
      expect(await oauthRecords.get('AccessToken', 'a')).toBeDefined(); // by the store's clock: T0
      const sweepAt = (ms: number) =>
        new PostgresSweeper(pool, {
          tasks: oauthRecords.sweepTasks,
          intervalMs: MINUTE,
          now: () => new Date(ms),
        }).runOnce();
      expect(await sweepAt(T0 + 9)).toEqual({ ran: true, removed: { oauth_records: 0 } });
      expect(await sweepAt(T0 + 10)).toEqual({ ran: true, removed: { oauth_records: 1 } });
      const { rows } = await pool.query('SELECT id FROM oauth_records ORDER BY id');
      expect(rows.map((r) => r.id)).toEqual(['b', 'c']);
    } finally {
      await pool.end();
      await store.close();
    }
  });
});

describe('OAuth records: as openStore hands them to the service', () => {
  let dir: string;
  let db: TestDatabase;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-oauth-open-'));
    db = await testDatabase({ label: 'oauth_open' });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('JSON: oauth.json in DATA_DIR, on the service clock, written before the store lets go of DATA_DIR', async () => {
    const config = loadConfig({ DATA_DIR: dir, AC_LOG_LEVEL: 'silent' });
    const clock = new Clock();
    const opened = await openStore(config, holder, { now: () => new Date(clock.ms) });
    await opened.oauthRecords.put(record('Session', 's', { expiresAt: T0 + 10 }));
    const late = opened.oauthRecords.put(record('Client', 'c'));
    await opened.store.close();
    await late;
    const file = JSON.parse(await readFile(path.join(dir, OAUTH_FILE), 'utf8'));
    expect(file.records.map((r: OAuthRecord) => r.id)).toEqual(['s', 'c']);

    const again = await openStore(config, holder, { now: () => new Date(T0 + 10) });
    try {
      expect(await again.oauthRecords.get('Session', 's')).toBeUndefined();
      expect(await again.oauthRecords.get('Client', 'c')).toBeDefined();
    } finally {
      await again.store.close();
    }
  });

  it('PostgreSQL: the table, on the service clock', async () => {
    const config = loadConfig({ DATABASE_URL: db.url, AC_LOG_LEVEL: 'silent' });
    const opened = await openStore(config, holder, { now: () => new Date(T0) });
    try {
      await opened.oauthRecords.put(record('Session', 's', { expiresAt: T0 + 1 }));
      expect(await opened.oauthRecords.get('Session', 's')).toBeDefined();
      expect(await opened.oauthRecords.sweep()).toBe(0);
    } finally {
      await opened.store.close();
    }
  });
});
