/**
 * What an agent spent and how its live data was served, for the usage endpoint (REST, the MCP resource
 * `ac://usage`, the console), and the operator's view of the live-data cache.
 *
 * Spending comes from the ledger, per UTC day and operation. Live-data answers are not all in the ledger
 * (cached ones are free, so they write nothing), so the core tallies every answer by how it was served
 * (`cache_state`) in memory and adds the counts to the store in one small transaction every few seconds
 * (write-behind, so that a free cached answer never waits for a disk or a database). A crash loses at most
 * those seconds of counts: they are statistics, not money. Reading usage adds the pending counts first.
 */
import type { Clock } from './clock.js';
import type { Ledger } from './ledger.js';
import { loadAccount } from './ledger.js';
import { CACHE_STATES, type CacheState } from './model.js';
import type { Input, Output } from './schemas.js';
import type { LiveUsageCount, StorePort } from './store-port.js';

const DAY_MS = 86_400_000;

/** How often pending live-data counts are added to the store. */
export const USAGE_FLUSH_MS = 5_000;

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function startOfDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/**
 * Live-data answers counted in memory until the next flush. A flush that fails keeps its counts for the next
 * one (and is reported, never thrown: a read of usage answers with what the store has). After `close`,
 * answers are no longer counted.
 */
export class LiveUsageTally {
  private pending = new Map<string, LiveUsageCount>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  /** The day of the last count, as its start (ms) and its text, so that a count formats no date. */
  private day = { start: Number.NaN, text: '' };

  constructor(
    private readonly store: StorePort,
    private readonly clock: Clock,
    private readonly onError: (err: unknown) => void,
    private readonly flushMs = USAGE_FLUSH_MS,
  ) {}

  count(agentId: string, state: CacheState): void {
    if (this.closed) return;
    const ms = this.clock.now().getTime();
    const start = startOfDay(ms);
    if (start !== this.day.start) this.day = { start, text: dayOf(ms) };
    const day = this.day.text;
    const slot = `${agentId} ${day} ${state}`;
    const row = this.pending.get(slot);
    if (row) row.count += 1;
    else this.pending.set(slot, { agentId, day, state, count: 1 });
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushMs).unref();
  }

  /** Adds the pending counts to the store; on failure they stay pending, for the next flush. Never rejects. */
  flush(): Promise<void> {
    const run = async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      try {
        await this.store.transact((tx) => tx.addLiveUsage([...batch.values()]));
      } catch (err) {
        for (const [slot, row] of batch) {
          const later = this.pending.get(slot);
          if (later) later.count += row.count;
          else this.pending.set(slot, row);
        }
        this.onError(err);
        this.schedule();
      }
    };
    this.flushing = this.flushing.then(run, run);
    return this.flushing;
  }

  /** Stops the timer and adds what is pending (at shutdown, before the store closes). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

/** The answers of `counts` by state, their total and the share not fetched for the request. */
export function liveSummary(counts: readonly Pick<LiveUsageCount, 'state' | 'count'>[]) {
  const byState = Object.fromEntries(CACHE_STATES.map((state) => [state, 0])) as Record<CacheState, number>;
  for (const row of counts) byState[row.state] += row.count;
  const answers = CACHE_STATES.reduce((sum, state) => sum + byState[state], 0);
  return {
    answers,
    ...byState,
    cache_hit_rate: answers === 0 ? null : (answers - byState.fresh) / answers,
  };
}

export function createUsage(store: StorePort, ledger: Ledger, clock: Clock, tally: LiveUsageTally) {
  async function summary(agentId: string, input: Input<'UsageInput'>): Promise<Output<'UsageOutput'>> {
    const today = startOfDay(clock.now().getTime());
    const first = today - (input.days - 1) * DAY_MS;
    const since = new Date(first).toISOString();
    await tally.flush();
    const [account, charges, live] = await Promise.all([
      store.read((reader) => loadAccount(reader, agentId)),
      store.ledgerUsage(agentId, since),
      store.liveUsage(agentId, dayOf(first)),
    ]);
    const days = Array.from({ length: input.days }, (_, i) => ({
      date: dayOf(first + i * DAY_MS),
      spent_cents: 0,
      charges: 0,
    }));
    const byDate = new Map(days.map((day) => [day.date, day]));
    const operations = new Map<string, { operation: string; charges: number; spent_cents: number }>();
    for (const row of charges) {
      const day = byDate.get(row.day);
      if (day) {
        day.spent_cents += row.spentCents;
        day.charges += row.charges;
      }
      const op = operations.get(row.operation) ?? { operation: row.operation, charges: 0, spent_cents: 0 };
      op.charges += row.charges;
      op.spent_cents += row.spentCents;
      operations.set(row.operation, op);
    }
    const todayRow = days.at(-1) as (typeof days)[number];
    return {
      since,
      days,
      operations: [...operations.values()].sort(
        (a, b) => b.spent_cents - a.spent_cents || a.operation.localeCompare(b.operation),
      ),
      today: {
        date: todayRow.date,
        spent_cents: todayRow.spent_cents,
        daily_limit_cents: ledger.dailyLimitOf(account) ?? null,
        resets_at: new Date(today + DAY_MS).toISOString(),
      },
      live_data: liveSummary(live),
      credit_balance_cents: account.balanceCents,
      plan: account.plan,
    };
  }

  return { summary };
}

export type Usage = ReturnType<typeof createUsage>;
