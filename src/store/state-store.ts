/**
 * StorePort over an in-memory StoreState. Transactions run one at a time; a transaction's changes are
 * first persisted (with the committed state they apply to) and only then applied to the state, so a read
 * never sees a change that is not on disk, and a failed save leaves memory as it was. With no-op
 * persistence it is also the in-memory store used by unit tests.
 */
import { AppError } from '../core/errors.js';
import type { StorePort, StoreReader, StoreTx } from '../core/store-port.js';
import type { Change } from './changes.js';
import { StateTx } from './state-tx.js';
import { StoreState } from './store-state.js';

export interface Persistence {
  /** Makes `state` with `changes` applied durable; `state` itself must not be modified. */
  persist(state: StoreState, changes: readonly Change[]): Promise<void>;
  close(): Promise<void>;
}

const noPersistence: Persistence = {
  persist: async () => {},
  close: async () => {},
};

export class StateStore implements StorePort {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly state: StoreState,
    private readonly persistence: Persistence = noPersistence,
  ) {}

  transact<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    const run = async () => {
      this.assertOpen();
      const tx = new StateTx(this.state);
      const result = await work(tx);
      if (tx.changes.length === 0) return result;
      try {
        await this.persistence.persist(this.state, tx.changes);
      } catch (err) {
        throw new AppError(
          'internal',
          'The store could not save this change; nothing was changed, retry.',
          {},
          err,
        );
      }
      for (const change of tx.changes) this.state.apply(change);
      return result;
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  async read<T>(work: (reader: StoreReader) => Promise<T>): Promise<T> {
    this.assertOpen();
    return work(this.state);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.queue;
    this.closed = true;
    await this.persistence.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('internal', 'The store is closed; the service is shutting down.');
  }
}

/** A store that keeps nothing on disk: for tests and throwaway runs. */
export function createMemoryStore(): StorePort {
  return new StateStore(new StoreState());
}
