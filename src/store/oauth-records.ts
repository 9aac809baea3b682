/**
 * The storage the OAuth 2.1 authorization server (src/oauth/, oidc-provider) keeps its state in: access and
 * refresh tokens, authorization codes, sessions, interactions, grants, registered clients, consents and its
 * signing keys, each a JSON object under a kind and an id, with the few indexes oidc-provider looks things
 * up by. One port with two adapters: a file of its own in DATA_DIR beside the JSON file store
 * (json-oauth-records.ts) and a table on PostgreSQL shared by every instance
 * (postgres/postgres-oauth-records.ts). The rules every record obeys, whichever the store, are checked here.
 */

/** One thing the authorization server keeps (an oidc-provider model instance, a consent, a signing key). */
export interface OAuthRecord {
  /**
   * The model: 'AccessToken', 'RefreshToken', 'AuthorizationCode', 'Session', 'Interaction', 'Grant',
   * 'Client', 'Consent', 'Secret', ... (any string of 1 to 64 characters).
   */
  kind: string;
  /** Its id within the kind. The caller hashes secrets before they get here. */
  id: string;
  /** JSON-serialisable object; what is stored and read back is its JSON (undefined members dropped). */
  payload: Record<string, unknown>;
  /** When it stops existing, epoch milliseconds (a whole number); absent: never. */
  expiresAt?: number;
  /** Indexes the caller can look up by (each optional). */
  grantId?: string;
  uid?: string;
  userCode?: string;
  accountId?: string;
  /** When it was consumed (epoch ms), absent while not. */
  consumedAt?: number;
}

/**
 * The authorization server's records. A record whose `expiresAt` is at or before `now()` (the store's
 * clock) is absent to every call; `sweep` (and, on PostgreSQL, the background sweeper) removes it. Every
 * write resolves once it is durable, and every read sees every write that has resolved, on every instance.
 */
export interface OAuthRecords {
  /** Insert or replace by (kind, id). */
  put(record: OAuthRecord): Promise<void>;
  /**
   * Insert unless (kind, id) exists and is not expired; returns the record that is stored afterwards (yours
   * or the one already there). Used for shared secrets created by whichever instance starts first: two
   * concurrent calls, on any instances, return the same record.
   */
  putIfAbsent(record: OAuthRecord): Promise<OAuthRecord>;
  /** The record, or undefined when absent or expired at `now()`. */
  get(kind: string, id: string): Promise<OAuthRecord | undefined>;
  /** The unexpired record of `kind` with this uid (the newest put, should there be several). */
  findByUid(kind: string, uid: string): Promise<OAuthRecord | undefined>;
  /** The unexpired record of `kind` with this user code (the newest put, should there be several). */
  findByUserCode(kind: string, userCode: string): Promise<OAuthRecord | undefined>;
  /**
   * Marks it consumed at now(), atomically: true when this call consumed it, false when it was consumed
   * already or does not exist (expired counts as absent). Of concurrent calls, on any instances, one wins.
   */
  consume(kind: string, id: string): Promise<boolean>;
  delete(kind: string, id: string): Promise<void>;
  /** Deletes every record (any kind) with this grantId; returns how many. */
  deleteByGrant(grantId: string): Promise<number>;
  /** The unexpired records of a kind for an account, the newest put first. */
  listByAccount(kind: string, accountId: string): Promise<OAuthRecord[]>;
  /** Drops expired records; returns how many. */
  sweep(): Promise<number>;
}

/** The longest kind, in characters. */
export const MAX_KIND_LENGTH = 64;
/**
 * The longest id or index value, in UTF-8 bytes: PostgreSQL's b-tree indexes refuse an entry of more than
 * about 2,700 bytes, and (kind, id) is one. A Client ID Metadata Document URL fits many times over.
 */
export const MAX_KEY_BYTES = 2000;
/** The largest payload, as JSON in UTF-8 bytes: the caller keeps them near 64 KiB; this is a safety net. */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
/** The latest instant a JavaScript Date holds, in epoch milliseconds. */
const MAX_INSTANT = 8.64e15;

const INDEXES = ['grantId', 'uid', 'userCode', 'accountId'] as const;

/** A string that can be a key of a record on every store: PostgreSQL's text refuses NUL. */
export function isStorableKey(value: string): boolean {
  return value.length > 0 && !value.includes('\u0000') && Buffer.byteLength(value, 'utf8') <= MAX_KEY_BYTES;
}

function checkKey(what: string, value: unknown): void {
  if (typeof value !== 'string' || !isStorableKey(value)) {
    throw new Error(
      `An OAuth record's ${what} must be a string of 1 to ${MAX_KEY_BYTES} UTF-8 bytes without NUL; got ` +
        `${typeof value === 'string' ? `${Buffer.byteLength(value, 'utf8')} bytes` : typeof value}.`,
    );
  }
}

function checkInstant(what: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_INSTANT) {
    throw new Error(`An OAuth record's ${what} must be a whole number of epoch milliseconds; got ${value}.`);
  }
}

/**
 * Checks `record` against the rules above and returns the JSON text of its payload (which is what both
 * stores keep). Throws an Error that names what is wrong.
 */
export function checkOAuthRecord(record: OAuthRecord): string {
  if (typeof record.kind !== 'string' || record.kind.length < 1 || record.kind.length > MAX_KIND_LENGTH) {
    throw new Error(`An OAuth record's kind must be 1 to ${MAX_KIND_LENGTH} characters; got ${record.kind}.`);
  }
  checkKey('kind', record.kind);
  checkKey('id', record.id);
  for (const index of INDEXES) if (record[index] !== undefined) checkKey(index, record[index]);
  if (record.expiresAt !== undefined) checkInstant('expiresAt', record.expiresAt);
  if (record.consumedAt !== undefined) checkInstant('consumedAt', record.consumedAt);
  const payload = record.payload as unknown;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new Error(`The payload of OAuth record ${record.kind} ${record.id} must be a JSON object.`);
  }
  const text = JSON.stringify(payload);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_PAYLOAD_BYTES) {
    throw new Error(
      `The payload of OAuth record ${record.kind} ${record.id} is ${bytes} bytes of JSON; at most ` +
        `${MAX_PAYLOAD_BYTES} are kept.`,
    );
  }
  return text;
}
