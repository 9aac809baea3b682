/**
 * One transaction's statements on a pipelining connection (`pg`'s `pipeline: true`): a statement is sent
 * without waiting for the answers of the ones before it, and the transaction waits only where it needs an
 * answer. So a charged request costs fewer round trips: `BEGIN` goes out with the transaction's first read,
 * and the writes, whose answers the work does not use, go out with the next read or with `COMMIT`, all in one
 * write to the socket (held corked until then: on this machine a system call costs more than the bytes).
 *
 * - The server runs the statements in the order sent and answers in that order, so a read sees every write
 *   sent before it, and the first failure is the first answer that fails: a later statement of the aborted
 *   transaction fails too (25P02), but the caller gets the first failure.
 * - A write that fails is reported at the next answer awaited. Should the work catch that and go on, the
 *   commit still refuses: it sends no `COMMIT` after any failure, and a `COMMIT` that the server answers
 *   with `ROLLBACK` (an aborted transaction) is an error.
 * - A write whose rows must be checked before the transaction may commit says so in its SQL (a division by
 *   zero when no row matched), so that checking it costs no round trip; `failure` turns that error into the
 *   one the caller should see.
 */
import pg from 'pg';
import { nameOf } from './prepared.js';

export class TxPipeline {
  /** Sent, not yet awaited: every one has a handler, so one that fails while nobody waits is no crash. */
  private inflight: Promise<unknown>[] = [];
  private begun = false;
  /** Whether the socket is corked with statements not yet handed to it. */
  private held = false;
  /** The first failure of a statement sent, as soon as its answer (or the client) reports it. */
  private failure: unknown;
  /** Whether the server refused a statement before `COMMIT`: the transaction is then surely not committed. */
  private refused = false;
  /** Whether the outcome may be a commit: `COMMIT` was sent, and no statement before it was refused. */
  committing = false;

  constructor(private readonly client: pg.PoolClient) {}

  /** Runs a statement and waits for its answer (and so for the answers of all sent before it). */
  async query(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    const sent = this.send(text, values);
    this.track(sent);
    this.flush();
    await this.settle();
    return sent;
  }

  /** Sends a write whose answer the work does not need; `failure` maps its error to the caller's. */
  write(text: string, values: unknown[], failure?: (err: unknown) => unknown): void {
    const sent = this.send(text, values);
    this.track(
      failure === undefined
        ? sent
        : sent.catch((err: unknown) => {
            throw failure(err);
          }),
    );
  }

  /** Commits what was sent (nothing to do when nothing was), or throws why it cannot. */
  async commit(): Promise<void> {
    if (!this.begun) return;
    // A statement that failed in the client (never sent) reports it in a tick of its own: wait for it.
    await new Promise((resolve) => process.nextTick(resolve));
    if (this.failure !== undefined) {
      // Failed, whether or not the work saw it: no COMMIT (one that failed in the client was never sent).
      this.flush();
      await this.settle();
      throw this.failure;
    }
    const sent = this.send('COMMIT', []);
    this.track(sent);
    this.committing = true;
    this.flush();
    try {
      await this.settle();
    } catch (err) {
      if (this.refused) this.committing = false;
      throw err;
    }
    const { command } = await sent;
    if (command !== 'COMMIT') {
      this.committing = false;
      throw new Error(`The database answered COMMIT with ${command}: a statement of the transaction failed.`);
    }
  }

  /** Rolls back what was sent, after every answer has come (the connection then goes back to the pool). */
  async rollback(): Promise<void> {
    if (!this.begun) return;
    this.flush();
    await this.client.query('ROLLBACK');
  }

  /** Hands a statement to the corked socket (`BEGIN` before the first); its answer is not yet tracked. */
  private send(text: string, values: unknown[]): Promise<pg.QueryResult> {
    if (!this.held) {
      this.client.connection.stream.cork();
      this.held = true;
    }
    if (!this.begun) {
      this.begun = true;
      this.track(this.noteRefusal(this.client.query('BEGIN')));
    }
    const commit = text === 'COMMIT';
    const sent = commit ? this.client.query(text) : this.client.query({ name: nameOf(text), text, values });
    return commit ? sent : this.noteRefusal(sent);
  }

  /** `sent`, noted as refused by the server when its answer is an error (the transaction is then aborted). */
  private noteRefusal(sent: Promise<pg.QueryResult>): Promise<pg.QueryResult> {
    sent.catch((err: unknown) => {
      if (err instanceof pg.DatabaseError) this.refused = true;
    });
    return sent;
  }

  /** Hands the statements held so far to the socket, in one write. */
  private flush(): void {
    if (!this.held) return;
    this.held = false;
    this.client.connection.stream.uncork();
  }

  /** Waits for `answer` at the next settle; its failure, if any, is the transaction's. */
  private track(answer: Promise<unknown>): void {
    answer.catch((err: unknown) => {
      this.failure ??= err;
    });
    this.inflight.push(answer);
  }

  /** Waits for every answer sent so far; the first failure among them is thrown. */
  private async settle(): Promise<void> {
    const waiting = this.inflight;
    this.inflight = [];
    await Promise.all(waiting);
  }
}
