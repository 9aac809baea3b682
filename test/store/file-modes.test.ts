/**
 * Every file of the store is owner-only (0600) and its own directory 0700: when created, when written by
 * compaction, and again on every start for files an older version (or a copy) left readable by others.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Account } from '../../src/core/model.js';
import { LOCK_FILE } from '../../src/store/json/data-dir-lock.js';
import {
  JOURNAL_FILE,
  LOCAL_AGENT_FILE,
  openJsonFileStore,
  STORE_FILE,
} from '../../src/store/json/json-file-store.js';

const holder = { pid: process.pid, command: 'test', startedAt: new Date().toISOString() };

async function modes(dir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = { '.': (await stat(dir)).mode & 0o777 };
  for (const name of await readdir(dir)) out[name] = (await stat(path.join(dir, name))).mode & 0o777;
  return out;
}

function account(n: number): Account {
  return {
    id: `agt_${n}`,
    email: `a${n}@example.com`,
    name: null,
    plan: 'pay-as-you-go',
    keyHash: `${n}`.padStart(64, '0'),
    balanceCents: 0,
    createdAt: new Date(0).toISOString(),
  };
}

describe('file modes of the store', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'ac-modes-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('creates the directory 0700 and every file 0600, compaction included', async () => {
    const dir = path.join(root, 'new', 'store');
    const { store } = await openJsonFileStore(dir, holder, { maxJournalBytes: 1 });
    // Each commit grows the journal past 1 byte, so compaction writes a new snapshot.
    for (let i = 0; i < 5; i++) await store.transact(async (tx) => tx.putAccount(account(i)));
    // Compaction ran: the snapshot holds committed accounts while the store is still open. The snapshot
    // is written beside the commits that follow the cut of the log, so it may lag them for a moment.
    const accountsInSnapshot = async () =>
      JSON.parse(await readFile(path.join(dir, STORE_FILE), 'utf8')).accounts.length as number;
    await expect.poll(accountsInSnapshot, { timeout: 5000 }).toBeGreaterThanOrEqual(4);
    const open = await modes(dir);
    expect(open).toMatchObject({
      '.': 0o700,
      [STORE_FILE]: 0o600,
      [JOURNAL_FILE]: 0o600,
      [LOCK_FILE]: 0o600,
    });
    await store.close();
    const closed = await modes(dir);
    expect(Object.keys(closed).sort()).toEqual(['.', JOURNAL_FILE, STORE_FILE].sort());
    for (const mode of Object.values(closed)) expect(mode & 0o077).toBe(0);
  });

  it('makes files others could read owner-only on every start; the own directory too, a named one keeps its mode', async () => {
    const dir = path.join(root, 'old');
    await mkdir(dir, { mode: 0o755 });
    const first = await openJsonFileStore(dir, holder);
    await first.store.transact(async (tx) => tx.putAccount(account(1)));
    await first.store.close();
    await writeFile(path.join(dir, LOCAL_AGENT_FILE), '{}');
    for (const name of [STORE_FILE, JOURNAL_FILE, LOCAL_AGENT_FILE]) await chmod(path.join(dir, name), 0o644);
    await chmod(dir, 0o755);

    const named = await openJsonFileStore(dir, holder);
    const seen = await modes(dir);
    expect(seen['.']).toBe(0o755); // a DATA_DIR the operator named keeps the mode they gave it
    for (const name of [STORE_FILE, JOURNAL_FILE, LOCAL_AGENT_FILE, LOCK_FILE])
      expect(seen[name]).toBe(0o600);
    await named.store.close();

    const own = await openJsonFileStore(dir, holder, { ownDirectory: true });
    expect((await modes(dir))['.']).toBe(0o700); // the user data directory is the service's own
    await own.store.close();
  });
});
