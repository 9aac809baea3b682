/**
 * The JSON file store's background clean-up: every interval, the memories that expired (absent to every read
 * already) are deleted, in batches of one transaction each, so that they stop taking space in the state, the
 * journal and the snapshot. On PostgreSQL the sweeper does the same (postgres-sweeper.ts).
 */
import { BackgroundRounds } from './background-rounds.js';
import type { SweepOutcome } from './postgres/postgres-sweeper.js';
import type { StateStore } from './state-store.js';

/** Memories one transaction deletes: a round never holds the store for long. */
export const PURGE_BATCH = 1_000;

export interface ExpiryPurgerOptions {
  intervalMs: number;
  /** The service's clock: what has expired is judged by it. */
  now?: () => Date;
  /** Told what a round removed, or why it failed. */
  onRound?: (outcome: SweepOutcome | { error: unknown }) => void;
}

export class ExpiryPurger extends BackgroundRounds<SweepOutcome> {
  constructor(
    private readonly store: Pick<StateStore, 'purgeExpiredMemories'>,
    private readonly options: ExpiryPurgerOptions,
  ) {
    super(options.intervalMs, options.onRound);
  }

  /** One round: batches until one deletes fewer than a full batch. */
  async runOnce(): Promise<SweepOutcome> {
    const at = (this.options.now?.() ?? new Date()).toISOString();
    let total = 0;
    for (;;) {
      const count = await this.store.purgeExpiredMemories(at, PURGE_BATCH);
      total += count;
      if (count < PURGE_BATCH) break;
    }
    return { ran: true, removed: { 'expired memories': total } };
  }
}
