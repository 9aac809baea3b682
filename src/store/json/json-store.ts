/**
 * StorePort over an in-memory JsonState, with a write-ahead log for durability. Transactions run one at
 * a time (so none can interleave with another and overdraw a balance or lose an update); each commit
 * applies its changes to the state, hands them to the log under the next sequence number, and releases
 * the next transaction at once. The committing call resolves only once its changes are durable, so many
 * transactions share one disk flush (group commit). Reads wait until what they could see is durable.
 * If the log fails, nothing more is acknowledged: the store refuses all work until a restart replays
 * what reached the disk.
 */

import { randomUUID } from 'node:crypto';
import type { ChargePort } from '../../core/charge-port.js';
import { AppError } from '../../core/errors.js';
import { isLive } from '../../core/model.js';
import type {
  AccountPage,
  IdempotencyClaim,
  IdempotencyClaimRequest,
  LedgerPage,
  LedgerUsage,
  LiveUsageCount,
  StoreHealth,
  StorePort,
  StoreStats,
  StoreTx,
} from '../../core/store-port.js';
import type { StoreReader } from '../../core/store-reader.js';
import { createTransactionCharges } from '../transaction-charges.js';
import type { Change } from './changes.js';
import { idempotencySlot, JsonState } from './json-state.js';
import { JsonTx } from './json-tx.js';

/** Where committed changes go. All methods may be called only by JsonStore. */
export interface Persistence {
  /** Makes a transaction's changes durable; resolves when they are. */
  append(seq: number, changes: readonly Change[]): Promise<void>;
  /** Resolves once everything up to `seq` is durable. */
  waitFor(seq: number): Promise<void>;
  /** Whether the log has grown enough to fold it into a snapshot. */
  compactionDue(): boolean;
  /**
   * Folds everything up to `seq` (all of `state`) into a snapshot. Called with no transaction running;
   * resolves once the log is cut, so that commits can go on while `folded` writes the snapshot.
   */
  compact(state: JsonState, seq: number): Promise<{ folded: Promise<void> }>;
  /** Release at shutdown; with `compact`, fold the log into a snapshot first (clean shutdown). */
  close(state: JsonState, seq: number, compact: boolean): Promise<void>;
  /** Bytes of log since the last snapshot; absent without a log. */
  logBytes?(): number;
}

const noPersistence: Persistence = {
  append: async () => {},
  waitFor: async () => {},
  compactionDue: () => false,
  compact: async () => ({ folded: Promise.resolve() }),
  close: async () => {},
};

export class JsonStore implements StorePort {
  /** The charge port: each charged operation as one transaction, with the core's rules. */
  readonly charges: ChargePort = createTransactionCharges(this);
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private failed: unknown;
  private compacting = false;
  /** The snapshot being written after the last cut of the log, if any; never rejects. */
  private folding: Promise<void> | undefined;
  /**
   * Idempotency keys claimed by requests under way, by slot. In memory: one process writes the store (the
   * DATA_DIR lock), so its claims are all there are, and they end with it; no lease is needed.
   */
  private readonly claims = new Map<string, { token: string; fingerprint: string }>();

  constructor(
    private readonly state: JsonState,
    private readonly persistence: Persistence = noPersistence,
    /** Sequence number of the last change already in the state (from the snapshot and journal). */
    private seq = 0,
  ) {}

  async transact<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    const run = async () => {
      this.assertUsable();
      const tx = new JsonTx(this.state);
      const result = await work(tx);
      if (tx.changes.length === 0) return { result, durable: undefined };
      const seq = ++this.seq;
      for (const change of tx.changes) this.state.apply(change);
      const durable = this.persistence.append(seq, tx.changes);
      durable.catch((err) => {
        this.failed ??= err;
      });
      this.scheduleCompaction();
      return { result, durable };
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    const { result, durable } = await next;
    if (durable) {
      try {
        await durable;
      } catch (err) {
        throw new AppError(
          'internal',
          'The store could not save this change; the service needs a restart.',
          {},
          err,
        );
      }
    }
    return result;
  }

  /**
   * Deletes up to `limit` memories expired at `at` (an ISO instant) in one transaction, each checked again
   * inside it (a store since may have renewed it); returns how many. Expired memories are absent to every read
   * already: this only frees their space.
   */
  async purgeExpiredMemories(at: string, limit: number): Promise<number> {
    return this.transact(async (tx) => {
      let purged = 0;
      for (const { agentId, key } of this.state.expiredMemories(at, limit)) {
        const memory = await tx.getMemory(agentId, key);
        if (memory && !isLive(memory, at) && (await tx.deleteMemory(agentId, key))) purged++;
      }
      return purged;
    });
  }

  /**
   * Drops up to `limit` histories past their retention at `at` (no live memory, newest entry written before
   * `cutoff`), each checked again inside the transaction; returns how many.
   */
  async purgeRetiredHistories(at: string, cutoff: string, limit: number): Promise<number> {
    return this.transact(async (tx) => {
      let purged = 0;
      for (const { agentId, key } of this.state.retiredHistories(at, cutoff, limit)) {
        const [newest] = await tx.listMemoryVersions(agentId, key, 1);
        const memory = await tx.getMemory(agentId, key);
        if (!newest || newest.at >= cutoff || (memory && isLive(memory, at))) continue;
        await tx.dropMemoryVersions(agentId, key);
        purged++;
      }
      return purged;
    });
  }

  /**
   * Drops the live-data answer counts of days before `before` (YYYY-MM-DD), in one transaction when there are
   * any; returns 1 when it dropped some, else 0.
   */
  async purgeOldLiveUsage(before: string): Promise<number> {
    if (!this.state.hasLiveUsageBefore(before)) return 0;
    return this.transact(async (tx) => {
      (tx as JsonTx).dropLiveUsageBefore(before);
      return 1;
    });
  }

  async read<T>(work: (reader: StoreReader) => Promise<T>): Promise<T> {
    this.assertUsable();
    // What this read can see must be on disk before it answers: wait for the last commit's flush.
    await this.persistence.waitFor(this.seq);
    return work(this.state);
  }

  ledgerPage(agentId: string, page: { limit: number; before?: number }): Promise<LedgerPage> {
    return this.read(async () => this.state.ledgerPage(agentId, page));
  }

  ledgerUsage(agentId: string, since: string): Promise<LedgerUsage[]> {
    return this.read(async () => this.state.ledgerUsage(agentId, since));
  }

  liveUsage(agentId: string, sinceDay: string): Promise<LiveUsageCount[]> {
    return this.read(async () => this.state.liveUsage(agentId, sinceDay));
  }

  liveUsageTotals(sinceDay: string): Promise<Omit<LiveUsageCount, 'agentId'>[]> {
    return this.read(async () => this.state.liveUsageTotals(sinceDay));
  }

  listAccounts(page: { limit: number; after?: string; emailContains?: string }): Promise<AccountPage> {
    return this.read(async () => this.state.listAccounts(page));
  }

  stats(): StoreStats {
    const bytes = this.persistence.logBytes?.();
    return bytes === undefined ? {} : { journalBytes: bytes };
  }

  async claimIdempotency(request: IdempotencyClaimRequest): Promise<IdempotencyClaim> {
    this.assertUsable();
    // A stored record is replayed only once it is on disk, as any read.
    await this.persistence.waitFor(this.seq);
    // From here to the return nothing awaits, so no other claim can come between the look and the claim.
    const slot = idempotencySlot(request.agentId, request.key);
    const record = this.state.idempotencyRecord(request.agentId, request.key);
    if (record && Date.parse(record.createdAt) > Date.parse(request.storedAfter))
      return { state: 'stored', record };
    const held = this.claims.get(slot);
    if (held) return { state: 'running', fingerprint: held.fingerprint };
    const token = randomUUID();
    this.claims.set(slot, { token, fingerprint: request.fingerprint });
    return { state: 'claimed', token };
  }

  async releaseIdempotency(agentId: string, key: string, token: string): Promise<void> {
    const slot = idempotencySlot(agentId, key);
    if (this.claims.get(slot)?.token === token) this.claims.delete(slot);
  }

  async health(): Promise<StoreHealth> {
    return this.failed ? 'failed' : this.closed ? 'closed' : 'ok';
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Requests already under way (the server has stopped taking new ones) may still be on their way to a
    // transaction: let them in until the queue has stayed idle for a moment, then close.
    let seen: Promise<unknown>;
    do {
      seen = this.queue;
      await seen;
      await new Promise((resolve) => setTimeout(resolve, 25));
    } while (seen !== this.queue);
    this.closed = true;
    await this.persistence.close(this.state, this.seq, !this.failed);
  }

  /**
   * Cuts the log once it is past its bound: queued like a transaction, so that no commit happens while the
   * snapshot is taken and the log cut; the snapshot is then written beside the commits that follow. If the
   * new log passes its bound before that snapshot is written, the next cut waits for it, so the log never
   * holds much more than its bound.
   */
  private scheduleCompaction(): void {
    if (this.compacting || !this.persistence.compactionDue()) return;
    this.compacting = true;
    const cut = async () => {
      try {
        await this.folding;
        if (this.failed) return;
        const { folded } = await this.persistence.compact(this.state, this.seq);
        this.folding = folded.then(
          () => undefined,
          (err) => {
            this.failed ??= err;
          },
        );
      } finally {
        this.compacting = false;
      }
    };
    this.queue = this.queue.then(cut, cut).catch((err) => {
      this.failed ??= err;
    });
  }

  private assertUsable(): void {
    if (this.closed) throw new AppError('internal', 'The store is closed; the service is shutting down.');
    if (this.failed) {
      throw new AppError(
        'internal',
        'The store could not write to disk; the service needs a restart.',
        {},
        this.failed,
      );
    }
  }
}

/** A store that keeps nothing on disk: for tests and throwaway runs. */
export function createMemoryStore(): StorePort {
  return new JsonStore(new JsonState());
}
