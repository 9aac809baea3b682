/**
 * The JSON file store's background clean-up: every interval, the memories that expired (absent to every read
 * already) are deleted, in batches of one transaction each, so that they stop taking space in the state, the
 * journal and the snapshot; so are histories past their retention and live-data answer counts older than the
 * usage endpoint shows. On PostgreSQL the sweeper does the same (postgres-sweeper.ts).
 */
import { firstUsageDayKept } from '../../core/model.js';
import { BackgroundRounds, type SweepOutcome } from '../background-rounds.js';
import type { JsonStore } from './json-store.js';

/** Memories one transaction deletes: a round never holds the store for long. */
export const PURGE_BATCH = 1_000;

export interface ExpiryPurgerOptions {
  intervalMs: number;
  /** How long the history of a deleted or expired memory is kept after its last write. */
  historyRetentionSeconds: number;
  /** The service's clock: what has expired is judged by it. */
  now?: () => Date;
  /** Told what a round removed, or why it failed. */
  onRound?: (outcome: SweepOutcome | { error: unknown }) => void;
}

export class ExpiryPurger extends BackgroundRounds<SweepOutcome> {
  constructor(
    private readonly store: Pick<
      JsonStore,
      'purgeExpiredMemories' | 'purgeRetiredHistories' | 'purgeOldLiveUsage'
    >,
    private readonly options: ExpiryPurgerOptions,
  ) {
    super(options.intervalMs, options.onRound);
  }

  /** One round: each task in batches until one removes fewer than a full batch. */
  async runOnce(): Promise<SweepOutcome> {
    const now = this.options.now?.() ?? new Date();
    const at = now.toISOString();
    const cutoff = new Date(now.getTime() - this.options.historyRetentionSeconds * 1000).toISOString();
    const tasks: Record<string, () => Promise<number>> = {
      'expired memories': () => this.store.purgeExpiredMemories(at, PURGE_BATCH),
      'retired histories': () => this.store.purgeRetiredHistories(at, cutoff, PURGE_BATCH),
      'old usage counts': () => this.store.purgeOldLiveUsage(firstUsageDayKept(now)),
    };
    const removed: Record<string, number> = {};
    for (const [name, batch] of Object.entries(tasks)) {
      let total = 0;
      for (;;) {
        const count = await batch();
        total += count;
        if (count < PURGE_BATCH) break;
      }
      removed[name] = total;
    }
    return { ran: true, removed };
  }
}
