/** What a round of a store's clean-up did: nothing (another held it), or how many records of each kind it removed. */
export type SweepOutcome = { ran: false } | { ran: true; removed: Record<string, number> };

/**
 * A background task run in rounds on an interval (the stores' clean-up): never two rounds at once from one
 * timer, the timer unref'd (it keeps no process alive), and `stop` waits for a round under way.
 */
export abstract class BackgroundRounds<T> {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly intervalMs: number,
    /** Told what a round did, or why it failed (the next round tries again). */
    private readonly onRound?: (outcome: T | { error: unknown }) => void,
  ) {}

  /** One round of the task. */
  abstract runOnce(): Promise<T>;

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.round = this.runOnce().then(
        (outcome) => this.onRound?.(outcome),
        (error: unknown) => this.onRound?.({ error }),
      );
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Stops the interval and waits for a round under way. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.round;
  }
}
