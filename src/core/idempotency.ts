/**
 * Idempotency keys: a request that carries one is run at most once per agent and key. Its successful
 * response is stored in the same transaction as its debit (see `Recorder` in ledger.ts), so a retry with
 * the same key and the same request gets that response back and is never charged twice:
 * - same key, same request, finished: the stored response (`replayed: true`), free;
 * - same key, same request, still running: 409, retry shortly;
 * - same key, a different request (another operation or other input): 422.
 * A failed request stores nothing, so its retry runs again. Records are kept for at least 24 hours.
 * "Still running" is a claim on the key held by the store (`StorePort.claimIdempotency`), so it holds across
 * every process that shares the store.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import type { Recorder } from './ledger.js';
import { IDEMPOTENCY_RETENTION_MS, type JsonObject } from './model.js';
import type { StorePort, StoreTx } from './store-port.js';

export const IDEMPOTENCY_KEY_MAX_CHARS = 255;

/**
 * What a key may hold: printable ASCII (U+0020-U+007E), not only spaces. The one definition of the rule,
 * applied here and published as the OpenAPI `Idempotency-Key` parameter's pattern (with maxLength
 * `IDEMPOTENCY_KEY_MAX_CHARS`); linear, and the same with or without the `u` flag.
 */
export const IDEMPOTENCY_KEY_PATTERN = /^\x20*[\x21-\x7e][\x20-\x7e]*$/u;

/** Checks a key as sent by a client (header or `_meta`); `undefined` when none was sent. */
export function parseIdempotencyKey(raw: unknown, where: string): string | undefined {
  if (raw === undefined) return undefined;
  if (
    typeof raw !== 'string' ||
    raw.length > IDEMPOTENCY_KEY_MAX_CHARS ||
    !IDEMPOTENCY_KEY_PATTERN.test(raw)
  ) {
    throw new AppError(
      'invalid_input',
      `${where} must be 1-${IDEMPOTENCY_KEY_MAX_CHARS} printable ASCII characters, for example a UUID ` +
        'you generate once per logical request and reuse on its retries.',
      { field: 'idempotency_key' },
    );
  }
  return raw;
}

/** What identifies "the same request": the operation and its validated input (defaults applied). */
export function requestFingerprint(operation: string, input: unknown): string {
  return createHash('sha256')
    .update(canonicalJson([operation, input]))
    .digest('hex');
}

export interface IdempotentOutcome<T> {
  status: number;
  body: T;
  /** True when `body` is the stored response of an earlier request with the same key. */
  replayed: boolean;
}

/**
 * How long a claim on a key holds when its request never finishes (its process died): longer than any
 * request may run (live data's budget is 15 s).
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;

export function createIdempotency(store: StorePort, clock: Clock) {
  /**
   * Runs `call` unless the agent already made this request with `key`. `call` must hand its response to
   * the recorder inside the transaction that charges for it.
   */
  async function run<T extends JsonObject>(
    agentId: string,
    operation: string,
    key: string,
    input: unknown,
    call: (record: Recorder) => Promise<T>,
  ): Promise<IdempotentOutcome<T>> {
    const fingerprint = requestFingerprint(operation, input);
    const now = clock.now();
    const claim = await store.claimIdempotency({
      agentId,
      key,
      fingerprint,
      operation,
      now: now.toISOString(),
      storedAfter: new Date(now.getTime() - IDEMPOTENCY_RETENTION_MS).toISOString(),
      leaseMs: IDEMPOTENCY_LEASE_MS,
    });
    if (claim.state === 'stored') {
      if (claim.record.fingerprint !== fingerprint) throw reused(claim.record.operation);
      return { status: claim.record.status, body: claim.record.body as T, replayed: true };
    }
    if (claim.state === 'running')
      throw claim.fingerprint === fingerprint ? stillRunning() : reused(operation);
    try {
      const record: Recorder = Object.assign(
        (tx: StoreTx, body: JsonObject) =>
          tx.putIdempotency(
            {
              agentId,
              key,
              fingerprint,
              operation,
              status: 200,
              body,
              createdAt: clock.now().toISOString(),
            },
            claim.token,
          ),
        { idempotencyKey: key, claim: { key, token: claim.token, fingerprint } },
      );
      return { status: 200, body: await call(record), replayed: false };
    } finally {
      await store.releaseIdempotency(agentId, key, claim.token);
    }
  }

  return { run };
}

function stillRunning(): AppError {
  return new AppError(
    'idempotency_in_progress',
    'A request with this idempotency key is still running; retry with the same key in a moment to get its ' +
      'response. Nothing was charged for this one.',
    { field: 'idempotency_key' },
  );
}

function reused(operation: string): AppError {
  return new AppError(
    'idempotency_key_reused',
    `This idempotency key was already used by this agent for a different request (${operation} with other ` +
      'input); use a new key for a new request. Nothing was charged.',
    { field: 'idempotency_key' },
  );
}

export type Idempotency = ReturnType<typeof createIdempotency>;
