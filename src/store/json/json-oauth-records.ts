/**
 * The authorization server's records (oauth-records.ts) beside the JSON file store: `oauth.json` in DATA_DIR,
 * a file of their own (owner-only), so that tokens and sessions, which come and go by the minute, never
 * grow the store's journal. Opened once the DATA_DIR lock is held (one process): the file is read whole
 * into memory at open, with the indexes as Maps; every read is answered from memory.
 *
 * A write is applied in memory at once (so later calls see it, and `consume` is atomic within the process),
 * then the whole file is written durably (DurableJsonFile: temporary file, fdatasync, rename, fsync of the
 * directory). Writes are serialised: one file write at a time, and every change made while one is under
 * way goes into the next, which then covers them all; a write resolves once a file write that includes it
 * is on disk. Expired records are dropped whenever the file is written. A file write that fails rejects the
 * writes it carried, and from then on every call is refused until a restart, which reads what reached the
 * disk (as the JSON file store does after a failed journal write): memory may hold changes the file does
 * not, a revocation among them, and nothing is answered from it.
 */
import { chmod, stat } from 'node:fs/promises';
import path from 'node:path';
import { checkOAuthRecord, isStorableKey, type OAuthRecord, type OAuthRecords } from '../oauth-records.js';
import { dataDirAccessError } from '../store-open-error.js';
import { DurableJsonFile } from './durable-json-file.js';
import { StoreFileError } from './json-file-store.js';

export const OAUTH_FILE = 'oauth.json';
const FORMAT = 'agent-context-oauth/1';

/** A record as kept in memory: its payload as JSON text, so that no caller can change what is stored. */
interface Stored {
  kind: string;
  id: string;
  payloadText: string;
  expiresAt?: number;
  grantId?: string;
  uid?: string;
  userCode?: string;
  accountId?: string;
  consumedAt?: number;
}

export interface JsonOAuthRecordsOptions {
  /** The clock by which records expire and are consumed, epoch ms; Date.now unless given. */
  now?: () => number;
}

/** Where a record is within its kind, and a kind-wide index value: kind and value cannot hold NUL. */
const keyOf = (kind: string, value: string) => `${kind}\u0000${value}`;

export class JsonOAuthRecords implements OAuthRecords {
  /** Every record by keyOf(kind, id), in the order of their puts (a replaced record goes to the end). */
  private readonly records = new Map<string, Stored>();
  /** The index values (kind-wide, but grants), each to the keys of its records in the order of their puts. */
  private readonly byUid = new Map<string, Set<string>>();
  private readonly byUserCode = new Map<string, Set<string>>();
  private readonly byGrant = new Map<string, Set<string>>();
  private readonly byAccount = new Map<string, Set<string>>();
  private readonly file: DurableJsonFile<unknown>;
  private readonly now: () => number;
  /** The file write under way or last done (never rejects), after which the next one starts. */
  private tail: Promise<void> = Promise.resolve();
  /** The next file write, not started yet: changes made now join it. */
  private queued: Promise<void> | undefined;
  private closed = false;
  /** The failed file write, after which every call is refused. */
  private failure: Error | undefined;

  private constructor(
    readonly path: string,
    options: JsonOAuthRecordsOptions,
  ) {
    this.file = new DurableJsonFile(path);
    this.now = options.now ?? Date.now;
  }

  /** Reads `oauth.json` in `dataDir` (none yet: no records), made owner-only if it was not. */
  static async open(dataDir: string, options: JsonOAuthRecordsOptions = {}): Promise<JsonOAuthRecords> {
    const records = new JsonOAuthRecords(path.join(dataDir, OAUTH_FILE), options);
    let data: unknown;
    try {
      const info = await stat(records.path).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      });
      if (info === undefined) return records;
      if (info.isFile() && (info.mode & 0o077) !== 0) await chmod(records.path, info.mode & 0o700);
      data = await records.file.read();
    } catch (err) {
      throw (
        dataDirAccessError(dataDir, err) ??
        records.damaged(`it could not be read as JSON (${(err as Error).message})`)
      );
    }
    const file = data as { format?: unknown; records?: unknown } | null;
    if (file?.format !== FORMAT || !Array.isArray(file.records)) {
      throw records.damaged(`it is not a file of OAuth records (format ${FORMAT})`);
    }
    for (const [n, record] of file.records.entries()) {
      let payloadText: string;
      try {
        payloadText = checkOAuthRecord(record as OAuthRecord);
      } catch (err) {
        throw records.damaged(`its record ${n + 1} is not one (${(err as Error).message})`);
      }
      const stored = toStored(record as OAuthRecord, payloadText);
      records.remove(keyOf(stored.kind, stored.id)); // written twice (by hand?): the later one counts
      records.add(stored);
    }
    return records;
  }

  async put(record: OAuthRecord): Promise<void> {
    this.assertOpen();
    const stored = toStored(record, checkOAuthRecord(record));
    this.remove(keyOf(record.kind, record.id));
    this.add(stored);
    await this.persist();
  }

  async putIfAbsent(record: OAuthRecord): Promise<OAuthRecord> {
    this.assertOpen();
    const stored = toStored(record, checkOAuthRecord(record));
    const existing = this.live(record.kind, record.id);
    if (existing !== undefined) {
      // It may have been put a moment ago: answer once it is on disk, as its own put does.
      await this.settled();
      return toRecord(existing);
    }
    this.remove(keyOf(record.kind, record.id));
    this.add(stored);
    await this.persist();
    return toRecord(stored);
  }

  async get(kind: string, id: string): Promise<OAuthRecord | undefined> {
    this.assertOpen();
    const stored = this.live(kind, id);
    return stored === undefined ? undefined : toRecord(stored);
  }

  async findByUid(kind: string, uid: string): Promise<OAuthRecord | undefined> {
    return this.findBy(this.byUid, kind, uid);
  }

  async findByUserCode(kind: string, userCode: string): Promise<OAuthRecord | undefined> {
    return this.findBy(this.byUserCode, kind, userCode);
  }

  async consume(kind: string, id: string): Promise<boolean> {
    this.assertOpen();
    const stored = this.live(kind, id);
    if (stored === undefined || stored.consumedAt !== undefined) return false;
    // Marked before anything is awaited: a second call, even one made before this write is on disk, loses.
    // set() on an existing key keeps the record's place in the put order.
    this.records.set(keyOf(kind, id), { ...stored, consumedAt: this.now() });
    await this.persist();
    return true;
  }

  async delete(kind: string, id: string): Promise<void> {
    this.assertOpen();
    if (this.remove(keyOf(kind, id))) await this.persist();
  }

  async deleteByGrant(grantId: string): Promise<number> {
    this.assertOpen();
    const keys = [...(this.byGrant.get(grantId) ?? [])];
    for (const key of keys) this.remove(key);
    if (keys.length > 0) await this.persist();
    return keys.length;
  }

  async listByAccount(kind: string, accountId: string): Promise<OAuthRecord[]> {
    this.assertOpen();
    return this.liveIn(this.byAccount, keyOf(kind, accountId)).reverse().map(toRecord);
  }

  async sweep(): Promise<number> {
    this.assertOpen();
    const removed = this.dropExpired();
    if (removed > 0) await this.persist();
    return removed;
  }

  /** Waits for the writes under way; every call after this one is refused. */
  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
  }

  /** The newest put unexpired record of `kind` with `value` in `index`. */
  private findBy(index: Map<string, Set<string>>, kind: string, value: string): OAuthRecord | undefined {
    this.assertOpen();
    const found = this.liveIn(index, keyOf(kind, value));
    return found.length === 0 ? undefined : toRecord(found[found.length - 1] as Stored);
  }

  /** The unexpired records at `value` in `index`, the oldest put first. */
  private liveIn(index: Map<string, Set<string>>, value: string): Stored[] {
    const now = this.now();
    const found: Stored[] = [];
    for (const key of index.get(value) ?? []) {
      const stored = this.records.get(key);
      if (stored !== undefined && !expired(stored, now)) found.push(stored);
    }
    return found;
  }

  /** The record of (kind, id) unless it has expired. */
  private live(kind: string, id: string): Stored | undefined {
    if (!isStorableKey(kind) || !isStorableKey(id)) return undefined;
    const stored = this.records.get(keyOf(kind, id));
    return stored === undefined || expired(stored, this.now()) ? undefined : stored;
  }

  private add(stored: Stored): void {
    const key = keyOf(stored.kind, stored.id);
    this.records.set(key, stored);
    if (stored.uid !== undefined) addTo(this.byUid, keyOf(stored.kind, stored.uid), key);
    if (stored.userCode !== undefined) addTo(this.byUserCode, keyOf(stored.kind, stored.userCode), key);
    if (stored.grantId !== undefined) addTo(this.byGrant, stored.grantId, key);
    if (stored.accountId !== undefined) addTo(this.byAccount, keyOf(stored.kind, stored.accountId), key);
  }

  /** Removes the record at `key` and its index entries; false when there was none. */
  private remove(key: string): boolean {
    const stored = this.records.get(key);
    if (stored === undefined) return false;
    this.records.delete(key);
    if (stored.uid !== undefined) removeFrom(this.byUid, keyOf(stored.kind, stored.uid), key);
    if (stored.userCode !== undefined) removeFrom(this.byUserCode, keyOf(stored.kind, stored.userCode), key);
    if (stored.grantId !== undefined) removeFrom(this.byGrant, stored.grantId, key);
    if (stored.accountId !== undefined) removeFrom(this.byAccount, keyOf(stored.kind, stored.accountId), key);
    return true;
  }

  private dropExpired(): number {
    const now = this.now();
    let removed = 0;
    for (const [key, stored] of this.records) {
      if (expired(stored, now)) {
        this.remove(key);
        removed++;
      }
    }
    return removed;
  }

  /** Resolves once a file write that holds every change made so far is on disk. */
  private persist(): Promise<void> {
    this.queued ??= this.queueWrite();
    return this.queued;
  }

  private queueWrite(): Promise<void> {
    const write = this.tail.then(() => {
      // From here on, changes go into the following write: this one takes the records as they are now.
      this.queued = undefined;
      if (this.failure !== undefined) throw this.failure; // not written: refused like every call from now on
      this.dropExpired();
      return this.file.writeText(this.fileText()).catch((err: Error) => {
        this.failure ??= err;
        throw err;
      });
    });
    this.tail = write.catch(() => undefined);
    return write;
  }

  /** Waits for the file writes queued or under way (whether they succeed or not). */
  private async settled(): Promise<void> {
    await (this.queued ?? this.tail).catch(() => undefined);
  }

  /** The file's text in parts (a record each), taken now: the payloads are JSON text already. */
  private fileText(): string[] {
    const parts = [`{"format":${JSON.stringify(FORMAT)},"records":[`];
    let first = true;
    for (const { payloadText, ...rest } of this.records.values()) {
      parts.push(`${first ? '' : ','}{"payload":${payloadText},${JSON.stringify(rest).slice(1)}`);
      first = false;
    }
    parts.push(']}\n');
    return parts;
  }

  private damaged(why: string): StoreFileError {
    return new StoreFileError(
      `${this.path} is damaged: ${why}. It holds the authorization server's tokens, sessions, registered ` +
        'clients and signing keys: restore it from a backup, or move it aside to start with none (every ' +
        'OAuth client then has to register and sign in again).',
    );
  }

  private assertOpen(): void {
    if (this.failure !== undefined) {
      throw new Error(
        `${this.path} could not be written (${this.failure.message}): the OAuth records refuse work until a ` +
          'restart, which reads what reached the disk.',
      );
    }
    if (this.closed) throw new Error('The OAuth records are closed.');
  }
}

/** Opens the OAuth records in `dataDir`; the caller holds the DATA_DIR lock (see open-store.ts). */
export function openJsonOAuthRecords(
  dataDir: string,
  options: JsonOAuthRecordsOptions = {},
): Promise<JsonOAuthRecords> {
  return JsonOAuthRecords.open(dataDir, options);
}

function expired(stored: Stored, now: number): boolean {
  return stored.expiresAt !== undefined && stored.expiresAt <= now;
}

function toStored(record: OAuthRecord, payloadText: string): Stored {
  return {
    kind: record.kind,
    id: record.id,
    payloadText,
    ...(record.expiresAt === undefined ? {} : { expiresAt: record.expiresAt }),
    ...(record.grantId === undefined ? {} : { grantId: record.grantId }),
    ...(record.uid === undefined ? {} : { uid: record.uid }),
    ...(record.userCode === undefined ? {} : { userCode: record.userCode }),
    ...(record.accountId === undefined ? {} : { accountId: record.accountId }),
    ...(record.consumedAt === undefined ? {} : { consumedAt: record.consumedAt }),
  };
}

function toRecord({ payloadText, ...rest }: Stored): OAuthRecord {
  return { ...rest, payload: JSON.parse(payloadText) as Record<string, unknown> };
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  if (keys === undefined) index.set(value, new Set([key]));
  else keys.add(key);
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  if (keys === undefined) return;
  keys.delete(key);
  if (keys.size === 0) index.delete(value);
}
