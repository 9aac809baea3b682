/**
 * StorePort over an in-memory StoreState. Transactions run one at a time; a transaction's changes are
 * applied and then handed to `persist`, and the transaction resolves only once `persist` has resolved.
 * If persisting fails, the state is reloaded from the last good copy (`reload`), so memory never holds
 * what the disk does not. With no-op persistence it is also the in-memory store used by unit tests.
 */
import { AppError } from '../core/errors.js';
import type { StorePort, StoreReader, StoreTx } from '../core/store-port.js';
import { StateTx } from './state-tx.js';
import { StoreState } from './store-state.js';

export interface Persistence {
  persist(state: StoreState): Promise<void>;
  reload(): Promise<StoreState>;
  close(): Promise<void>;
}

const noPersistence: Persistence = {
  persist: async () => {},
  reload: async () => new StoreState(),
  close: async () => {},
};

export class StateStore implements StorePort {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    private state: StoreState,
    private readonly persistence: Persistence = noPersistence,
  ) {}

  transact<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    const run = async () => {
      this.assertOpen();
      const tx = new StateTx(this.state);
      const result = await work(tx);
      if (tx.changes.length === 0) return result;
      for (const change of tx.changes) this.state.apply(change);
      try {
        await this.persistence.persist(this.state);
      } catch (err) {
        this.state = await this.persistence.reload();
        throw new AppError(
          'internal',
          'The store could not save this change; nothing was changed, retry.',
          {},
          err,
        );
      }
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
