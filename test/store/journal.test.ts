/** The journal beside the snapshot: replay, torn last lines, damage, compaction, and replay after a half-done compaction. */
import {
  appendFile,
  cp,
  mkdtemp,
  open as openFile,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Account, LedgerEntry } from '../../src/core/model.js';
import type { StorePort } from '../../src/core/store-port.js';
import { PREALLOCATE_BYTES } from '../../src/store/json/journal.js';
import {
  FOLDING_JOURNAL_FILE,
  JOURNAL_FILE,
  openJsonFileStore,
  STORE_FILE,
  StoreFileError,
} from '../../src/store/json/json-file-store.js';

const holder = { pid: process.pid, command: 'test', startedAt: '2026-11-21T00:00:00.000Z' };
const account: Account = {
  id: 'a',
  email: 'a@example.com',
  name: null,
  plan: 'pay-as-you-go',
  keyHash: 'h',
  balanceCents: 0,
  createdAt: '2026-11-21T00:00:00.000Z',
};

/** One debit-like transaction: a ledger entry and the matching balance. */
async function credit(store: StorePort, n: number): Promise<void> {
  await store.transact(async (tx) => {
    const current = (await tx.getAccount('a')) ?? account;
    const entry: LedgerEntry = {
      id: `txn_${n}`,
      agentId: 'a',
      at: '2026-11-21T00:00:00.000Z',
      operation: 'top_up',
      amountCents: 1,
      balanceAfterCents: current.balanceCents + 1,
    };
    await tx.appendLedger(entry);
    await tx.putAccount({ ...current, balanceCents: current.balanceCents + 1 });
  });
}

/** The journal's lines, without the zero padding that follows them. */
async function journalText(file: string): Promise<string> {
  return (await readFile(file, 'utf8')).replace(/\0+$/u, '');
}

async function balanceAndLedger(store: StorePort) {
  return store.read(async (r) => ({
    balance: (await r.getAccount('a'))?.balanceCents,
    ledger: (await r.listLedger('a', 10_000)).length,
  }));
}

describe('journal', () => {
  let dir: string;
  const open: StorePort[] = [];
  /** Stores "crashed" in a test: kept referenced until the test is over, so that no file handle is left to GC. */
  const crashed: StorePort[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close().catch(() => undefined);
    for (const s of crashed.splice(0)) await s.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });
  const openStore = async (maxJournalBytes?: number) => {
    const { store } = await openJsonFileStore(dir, holder, maxJournalBytes ? { maxJournalBytes } : {});
    open.push(store);
    return store;
  };
  /** Simulates a crash: the lock is dropped, nothing is flushed or compacted. */
  const crash = async (store: StorePort) => {
    open.splice(open.indexOf(store), 1);
    crashed.push(store);
    await rm(path.join(dir, 'agent-context.lock'), { force: true });
  };

  it('writes one journal line per transaction and replays them after a crash', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    const store = await openStore();
    for (let n = 1; n <= 20; n++) await credit(store, n);
    const lines = (await journalText(path.join(dir, JOURNAL_FILE))).trim().split('\n');
    expect(lines).toHaveLength(20);
    expect(lines[0]).toMatch(/^[0-9a-f]+\t\{"s":1,"c":\[/);
    await crash(store);
    const again = await openStore();
    expect(await balanceAndLedger(again)).toEqual({ balance: 20, ledger: 20 });
  });

  it('is zero-filled ahead of its lines, and cut back to its last whole line on open', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    const store = await openStore();
    for (let n = 1; n <= 3; n++) await credit(store, n);
    const file = path.join(dir, JOURNAL_FILE);
    const raw = await readFile(file);
    const lines = await journalText(file);
    expect(raw.length).toBe(PREALLOCATE_BYTES);
    expect(raw.subarray(Buffer.byteLength(lines)).every((byte) => byte === 0)).toBe(true);
    await crash(store);
    const again = await openStore();
    expect((await stat(file)).size).toBe(Buffer.byteLength(lines));
    expect(await balanceAndLedger(again)).toEqual({ balance: 3, ledger: 3 });
    // Past the first megabyte it grows by another.
    const big = `${'x'.repeat(PREALLOCATE_BYTES / 2)}`;
    for (const name of ['n1', 'n2']) {
      await again.transact(async (tx) => {
        await tx.putAccount({ ...account, id: name, email: `${name}@example.com`, keyHash: name, name: big });
      });
    }
    expect((await stat(file)).size).toBe(2 * PREALLOCATE_BYTES);
    await crash(again);
    expect(await (await openStore()).read((r) => r.getAccount('n2'))).toMatchObject({ name: big });
  });

  it('drops a line torn by a crash inside the zero padding, keeps everything before it', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    const store = await openStore();
    for (let n = 1; n <= 3; n++) await credit(store, n);
    await crash(store);
    const file = path.join(dir, JOURNAL_FILE);
    const intact = Buffer.byteLength(await journalText(file));
    const handle = await openFile(file, 'r+');
    await handle.write('deadbeef\t{"s":4,"c":[{"op":"account.put","acc', intact); // cut mid-line, zeros after
    await handle.close();
    const again = await openStore();
    expect(await balanceAndLedger(again)).toEqual({ balance: 3, ledger: 3 });
    expect((await stat(file)).size).toBe(intact);
    await credit(again, 4);
    await crash(again);
    expect(await balanceAndLedger(await openStore())).toEqual({ balance: 4, ledger: 4 });
  });

  it('drops a batch torn with a hole (a later page on disk, an earlier one not), whole-looking lines after it included', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    const store = await openStore();
    for (let n = 1; n <= 3; n++) await credit(store, n);
    await crash(store);
    const file = path.join(dir, JOURNAL_FILE);
    const text = await journalText(file);
    const intact = Buffer.byteLength(text);
    const whole = text.split('\n')[1] as string; // a line with a valid checksum
    const handle = await openFile(file, 'r+');
    // Zeros stay where the batch's first page should be; its second page holds a line's end and a whole line.
    await handle.write(`"acc":1}]}\n${whole}\n`, intact + 4096);
    await handle.close();
    const again = await openStore();
    expect(await balanceAndLedger(again)).toEqual({ balance: 3, ledger: 3 });
    expect((await stat(file)).size).toBe(intact);
  });

  it('drops a torn last line, keeps everything before it, and truncates the file', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    const store = await openStore();
    for (let n = 1; n <= 3; n++) await credit(store, n);
    await crash(store);
    const file = path.join(dir, JOURNAL_FILE);
    await writeFile(file, await journalText(file)); // a journal without padding, as a crash may leave one
    const intact = (await stat(file)).size;
    await appendFile(file, 'deadbeef\t{"s":4,"c":[{"op":"account.put","acc'); // cut mid-line
    const again = await openStore();
    expect(await balanceAndLedger(again)).toEqual({ balance: 3, ledger: 3 });
    expect((await stat(file)).size).toBe(intact);
    await credit(again, 4); // and appends continue cleanly after the cut
    await crash(again);
    expect(await balanceAndLedger(await openStore())).toEqual({ balance: 4, ledger: 4 });
  });

  it('drops a last line whose checksum does not match, never misreading it', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    const store = await openStore();
    await credit(store, 1);
    await crash(store);
    const file = path.join(dir, JOURNAL_FILE);
    const good = await journalText(file);
    const forged = good.replace('"balanceAfterCents":1', '"balanceAfterCents":9');
    await writeFile(file, good + forged); // a whole line, but its bytes are not what was written
    expect(await balanceAndLedger(await openStore())).toEqual({ balance: 1, ledger: 1 });
  });

  it('refuses to start on a damaged line that is not the last', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    const store = await openStore();
    for (let n = 1; n <= 3; n++) await credit(store, n);
    await crash(store);
    const file = path.join(dir, JOURNAL_FILE);
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines[1] = `0${lines[1]}`;
    await writeFile(file, lines.join('\n'));
    const err = await openJsonFileStore(dir, holder).catch((e) => e);
    expect(err).toBeInstanceOf(StoreFileError);
    expect(err.message).toMatch(/damaged at line 2/);
  });

  it('folds the journal into the snapshot past its bound and at clean shutdown', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    const store = await openStore(2000);
    for (let n = 1; n <= 30; n++) await credit(store, n);
    const journalSize = Buffer.byteLength(await journalText(path.join(dir, JOURNAL_FILE)));
    expect(journalSize).toBeLessThan(2000 + 1000);
    const snapshot = JSON.parse(await readFile(path.join(dir, STORE_FILE), 'utf8'));
    expect(snapshot.lastSeq).toBeGreaterThan(0);
    await store.close();
    open.splice(open.indexOf(store), 1);
    expect((await stat(path.join(dir, JOURNAL_FILE))).size).toBe(0);
    const final = JSON.parse(await readFile(path.join(dir, STORE_FILE), 'utf8'));
    expect(final.lastSeq).toBe(30);
    expect(final.ledger).toHaveLength(30);
    expect(await balanceAndLedger(await openStore())).toEqual({ balance: 30, ledger: 30 });
  });

  it('does not apply twice what a snapshot already holds (a crash between snapshot and truncation)', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    const store = await openStore();
    for (let n = 1; n <= 5; n++) await credit(store, n);
    const journal = await readFile(path.join(dir, JOURNAL_FILE), 'utf8');
    await store.close(); // snapshot with lastSeq 5, journal truncated
    open.splice(open.indexOf(store), 1);
    await writeFile(path.join(dir, JOURNAL_FILE), journal); // as if truncation never happened
    const again = await openStore();
    expect(await balanceAndLedger(again)).toEqual({ balance: 5, ledger: 5 });
    await credit(again, 6);
    await crash(again);
    expect(await balanceAndLedger(await openStore())).toEqual({ balance: 6, ledger: 6 });
  });

  it('goes on committing while a fold writes its snapshot, and a crash mid-fold loses nothing', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ac-journal-'));
    let atSnapshotWrite = false;
    let releaseSnapshotWrite!: () => void;
    const held = new Promise<void>((resolve) => {
      releaseSnapshotWrite = resolve;
    });
    const { store } = await openJsonFileStore(dir, holder, {
      maxJournalBytes: 2000,
      beforeSnapshotWrite: () => {
        atSnapshotWrite = true;
        return held;
      },
    });
    // Not in `open`: closing it waits for the held snapshot, so this test closes it after releasing that.
    let n = 0;
    while (n < 100 && !atSnapshotWrite) await credit(store, ++n);
    expect(n).toBeLessThan(100); // the log was cut
    // The snapshot is held back: commits are still acknowledged, into the new journal.
    for (let more = 0; more < 5; more++) await credit(store, ++n);
    const names = await readdir(dir);
    expect(names).toContain(FOLDING_JOURNAL_FILE);
    expect(await stat(path.join(dir, STORE_FILE)).catch(() => undefined)).toBeUndefined(); // not written yet

    // A crash now leaves the old snapshot, the journal set aside and the new journal: all of it replays,
    // and the set-aside journal is folded in at once.
    const copy = await mkdtemp(path.join(tmpdir(), 'ac-journal-crash-'));
    try {
      await cp(dir, copy, { recursive: true });
      await rm(path.join(copy, 'agent-context.lock'));
      const { store: recovered } = await openJsonFileStore(copy, holder);
      expect(await balanceAndLedger(recovered)).toEqual({ balance: n, ledger: n });
      expect(await readdir(copy)).not.toContain(FOLDING_JOURNAL_FILE);
      expect(JSON.parse(await readFile(path.join(copy, STORE_FILE), 'utf8')).lastSeq).toBe(n);
      await recovered.close();
    } finally {
      await rm(copy, { recursive: true, force: true });
    }

    releaseSnapshotWrite();
    await store.close();
    expect(await readdir(dir)).not.toContain(FOLDING_JOURNAL_FILE);
    expect(JSON.parse(await readFile(path.join(dir, STORE_FILE), 'utf8')).lastSeq).toBe(n);
    expect(await balanceAndLedger(await openStore())).toEqual({ balance: n, ledger: n });
  });
});
