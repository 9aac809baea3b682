/**
 * One transaction's statements on a pipelining connection (`pg`'s `pipeline: true`): a statement is sent
 * without waiting for the answers of the ones before it, and the transaction waits only where it needs an
 * answer. So a charged request costs fewer round trips: `BEGIN` goes out with the transaction's first read,
 * and the writes, whose answers the work does not use, go out with the next read or with `COMMIT`.
 *
 * - The server runs the statements in the order sent and answers in that order, so a read sees every write
 *   sent before it, and the first failure is the first answer that fails: a later statement of the aborted
 *   transaction fails too (25P02), but the caller gets the first failure.
 * - A write whose answer must be checked before the transaction may commit (its `check`) makes `commit`
 *   wait for the answers before it sends `COMMIT`.
 * - Statements sent together go out in one write to the socket (corked): on this machine a system call
 *   costs more than the bytes.
 */
import type pg from 'pg';
import { nameOf } from './prepared.js';

export class TxPipeline {
  /** Sent, not yet awaited: every one has a handler, so one that fails while nobody waits is no crash. */
  private inflight: Promise<unknown>[] = [];
  private begun = false;
  private checked = false;
  /** Whether `COMMIT` has been sent: a connection lost after it leaves the outcome unknown. */
  committing = false;

  constructor(private readonly client: pg.PoolClient) {}

  /** Runs a statement and waits for its answer (and so for the answers of all sent before it). */
  async query(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    const result = this.send(text, values);
    await this.settle();
    return result;
  }

  /** Sends a write whose answer the work does not need now; `check` looks at it before the commit. */
  write(text: string, values: unknown[], check?: (result: pg.QueryResult) => void): void {
    const sent = this.send(text, values);
    if (check === undefined) return;
    this.checked = true;
    this.track(sent.then(check));
  }

  /** Commits what was sent: nothing to do when nothing was. */
  async commit(): Promise<void> {
    if (!this.begun) return;
    if (this.checked) await this.settle();
    this.committing = true;
    await this.query('COMMIT');
  }

  /** Rolls back what was sent, after every answer has come (the connection then goes back to the pool). */
  async rollback(): Promise<void> {
    if (!this.begun) return;
    await this.client.query('ROLLBACK');
  }

  private send(text: string, values: unknown[]): Promise<pg.QueryResult> {
    const { stream } = this.client.connection;
    stream.cork();
    try {
      if (!this.begun) {
        this.begun = true;
        this.track(this.client.query('BEGIN'));
      }
      const sent =
        text === 'COMMIT' ? this.client.query(text) : this.client.query({ name: nameOf(text), text, values });
      this.track(sent);
      return sent;
    } finally {
      stream.uncork();
    }
  }

  private track(sent: Promise<unknown>): void {
    sent.catch(() => undefined);
    this.inflight.push(sent);
  }

  /** Waits for every answer sent so far; the first failure among them is thrown. */
  private async settle(): Promise<void> {
    const waiting = this.inflight;
    this.inflight = [];
    this.checked = false;
    await Promise.all(waiting);
  }
}
