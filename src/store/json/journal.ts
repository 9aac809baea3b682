/**
 * The write-ahead journal beside the snapshot: one line per transaction, `<crc32 hex>\t<json>`, where the
 * JSON is `{"s": seq, "c": [changes]}`. Appends are group-committed: while one batch is being flushed
 * (write + fdatasync), new lines gather and go together in the next, so many transactions share one
 * fdatasync. A transaction is acknowledged only once its line is on disk. On open, a last line cut short
 * by a crash is detected (bad JSON or checksum) and truncated away; a bad line anywhere else stops the
 * start, because that is damage, not a crash.
 *
 * The file is zero-filled ahead of the lines (PREALLOCATE_BYTES at a time, as databases pre-fill their
 * write-ahead logs), so that a commit overwrites blocks that already exist: its fdatasync then flushes the
 * data alone, without the file-size change a growing file adds to every flush (measured here: 106–116 µs
 * against 142–164 µs per write and fdatasync on ext4). NUL bytes after the last line are that padding:
 * on open they count as blank, and the file is cut back to its last whole line.
 */

import { constants, fdatasyncSync, writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { Change } from './changes.js';

export class JournalCorruptError extends Error {}

/** How far ahead of the lines the file is zero-filled. */
export const PREALLOCATE_BYTES = 1024 * 1024;
const ZEROS = Buffer.alloc(PREALLOCATE_BYTES);

/** Empty, or only the zero padding ahead of the lines. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) !== 0) return false;
  return true;
}

export interface JournalEntry {
  seq: number;
  changes: Change[];
}

interface Pending {
  seq: number;
  line: string;
  resolve(): void;
  reject(err: unknown): void;
}

function encode(seq: number, changes: readonly Change[]): string {
  const payload = JSON.stringify({ s: seq, c: changes });
  return `${crc32(payload).toString(16)}\t${payload}\n`;
}

function decode(line: string): JournalEntry | undefined {
  const tab = line.indexOf('\t');
  if (tab < 0) return undefined;
  const payload = line.slice(tab + 1);
  if (crc32(payload).toString(16) !== line.slice(0, tab)) return undefined;
  try {
    const { s, c } = JSON.parse(payload) as { s: number; c: Change[] };
    return Number.isInteger(s) && Array.isArray(c) ? { seq: s, changes: c } : undefined;
  } catch {
    return undefined;
  }
}

export class Journal {
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private bytes: number;
  /** The file's length: `bytes` of lines, then zeros up to here. */
  private allocated: number;
  private failure: unknown;
  /** Every entry up to this seq is on disk. */
  private durableSeq = 0;
  private waiters: { seq: number; resolve(): void; reject(err: unknown): void }[] = [];

  private constructor(
    private readonly file: string,
    private readonly handle: FileHandle,
    size: number,
  ) {
    this.bytes = size;
    this.allocated = size;
  }

  /** Opens (or creates) the journal and returns its intact entries, dropping a torn last line. */
  static async open(file: string): Promise<{ journal: Journal; entries: JournalEntry[] }> {
    // Read-write without O_APPEND: lines are written at their offset, over the zero padding.
    const handle = await open(file, constants.O_RDWR | constants.O_CREAT, 0o600);
    try {
      const text = await handle.readFile('utf8');
      const entries: JournalEntry[] = [];
      let offset = 0;
      let validBytes = 0;
      const lines = text.split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i] as string;
        const isLast = i === lines.length - 1;
        if (isLast && isBlank(line)) break; // the last line ends with a newline, as it should
        const entry = decode(line);
        if (!entry) {
          const onlyBlankAfter = lines.slice(i + 1).every(isBlank);
          // A NUL byte never appears in a written line (JSON escapes it): a line holding one was torn by a
          // crash while written over the padding. The disk may have kept later pages of that unacknowledged
          // batch and not earlier ones, so whole-looking lines after it are dropped with it.
          if (isLast || onlyBlankAfter || line.includes('\0')) break; // torn by a crash mid-append: drop it
          throw new JournalCorruptError(
            `${file} is damaged at line ${i + 1} (not a crash-torn last line); restore it from a backup or move it aside.`,
          );
        }
        entries.push(entry);
        offset += Buffer.byteLength(line, 'utf8') + 1;
        validBytes = offset;
      }
      if (validBytes < Buffer.byteLength(text, 'utf8')) {
        await handle.truncate(validBytes);
        await handle.datasync();
      }
      return { journal: new Journal(file, handle, validBytes), entries };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** Bytes in the journal, for deciding when to compact. */
  get size(): number {
    return this.bytes;
  }

  /** Queues a transaction's changes; resolves once they are on disk. */
  append(seq: number, changes: readonly Change[]): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ seq, line: encode(seq, changes), resolve, reject });
      this.flushing ??= this.flushLoop();
    });
  }

  /** Resolves once every entry up to `seq` is on disk. */
  waitFor(seq: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (seq <= this.durableSeq || (this.pending.length === 0 && !this.flushing)) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ seq, resolve, reject }));
  }

  /** Resolves once everything appended so far is on disk. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.failure) throw this.failure;
  }

  /** Empties the journal, after its content has been made durable elsewhere (a snapshot). */
  async truncate(): Promise<void> {
    await this.drain();
    await this.handle.truncate(0);
    await this.handle.datasync();
    this.bytes = 0;
    this.allocated = 0;
  }

  async close(): Promise<void> {
    await this.drain().catch(() => undefined);
    await this.handle.close();
  }

  /**
   * Zero-fills the file up to the next multiple of PREALLOCATE_BYTES at or past `needed`. The first flush
   * after it pays for the new size; the flushes after that overwrite blocks that exist.
   */
  private preallocate(needed: number): void {
    const target = Math.ceil(needed / PREALLOCATE_BYTES) * PREALLOCATE_BYTES;
    while (this.allocated < target) {
      const length = Math.min(ZEROS.length, target - this.allocated);
      this.allocated += writeSync(this.handle.fd, ZEROS, 0, length, this.allocated);
    }
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.pending.length > 0 && !this.failure) {
        // Let every transaction that commits in this turn of the event loop join the batch.
        await new Promise<void>((resolve) => setImmediate(resolve));
        const batch = this.pending;
        this.pending = [];
        try {
          const bytes = Buffer.from(batch.map((p) => p.line).join(''), 'utf8');
          if (this.bytes + bytes.length > this.allocated) {
            try {
              this.preallocate(this.bytes + bytes.length);
            } catch {
              // No room for the padding (a nearly full disk): the lines extend the file themselves, as
              // without it; a failure to write them is the disk failure handled below.
            }
          }
          // Synchronous write and fdatasync: measured here, the thread-pool round trip of the async calls
          // costs about as much as the flush itself (0.22 ms async against 0.14 ms sync per flush).
          for (let done = 0; done < bytes.length; ) {
            done += writeSync(this.handle.fd, bytes, done, bytes.length - done, this.bytes + done);
          }
          fdatasyncSync(this.handle.fd);
          this.bytes += bytes.length;
          this.durableSeq = Math.max(this.durableSeq, ...batch.map((p) => p.seq));
          for (const p of batch) p.resolve();
          const ready = this.waiters.filter((w) => w.seq <= this.durableSeq);
          this.waiters = this.waiters.filter((w) => w.seq > this.durableSeq);
          for (const w of ready) w.resolve();
        } catch (err) {
          // The disk failed us: nothing more can be acknowledged. Fail what waits, and all that follows.
          this.failure = new Error(`writing ${this.file} failed: ${(err as Error).message}`, { cause: err });
          for (const p of [...batch, ...this.pending, ...this.waiters]) p.reject(this.failure);
          this.pending = [];
          this.waiters = [];
        }
      }
    } finally {
      this.flushing = undefined;
      for (const w of this.waiters.splice(0)) w.resolve(); // nothing is left in flight
    }
  }
}
