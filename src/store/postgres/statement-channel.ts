/**
 * Single statements, each its own transaction, on a few connections that carry many at once (issue 32): every
 * read outside a transaction, every charged operation (one statement each: postgres-charges.ts), and what
 * shares the database beside the store (rate-limit counters, the live-data cache, OAuth records).
 *
 * - A connection runs in `pg`'s pipeline mode: a statement is sent without waiting for the answers of those
 *   before it, each ends with its own Sync (so it commits or fails alone), and the server answers in order.
 *   No checkout from a pool, no BEGIN or COMMIT: the client's cost per statement is its bytes and its answer.
 * - The statements of one turn of the event loop leave in one write per connection (the socket is corked
 *   until `setImmediate`): under load, one system call carries many requests' statements. On this kind of
 *   machine a write to a loopback socket costs more than the bytes (BENCHMARKS.md, issue 32).
 * - A statement with an `affinity` (the paying agent's id) always goes to the same connection: one agent's
 *   charges from this instance follow one another on it instead of waiting on each other's row lock on
 *   several, and a hot agent holds up one connection, not all. Others go to the connection with the fewest
 *   statements in flight.
 * - Connections open when first needed, up to `size`. One that fails (the database restarted) fails what it
 *   had in flight and is replaced at the next statement. A statement never sent fails with an error that
 *   `isUnreachable` recognises.
 */
import pg from 'pg';
import { nameOf } from './prepared.js';

export interface StatementChannelOptions {
  connectionString: string;
  /** The most connections. */
  size: number;
  /** Longest a statement may run, ms (each connection's statement_timeout). */
  statementTimeoutMs: number;
  /** Longest a connection may take to open, ms. */
  connectTimeoutMs: number;
}

interface Slot {
  client?: pg.Client;
  connecting?: Promise<pg.Client>;
  /** Statements sent on this slot's connection whose answer has not come. */
  inFlight: number;
  /** Whether its socket is corked until the end of this turn. */
  corked: boolean;
}

/** FNV-1a over a string's UTF-16 code units: which connection an affinity goes to. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export class StatementChannel {
  private readonly slots: Slot[];
  private closed = false;

  constructor(private readonly options: StatementChannelOptions) {
    this.slots = Array.from({ length: Math.max(1, options.size) }, () => ({ inFlight: 0, corked: false }));
  }

  /**
   * Runs one statement, named by its text (parsed and planned once per connection: texts must be fixed ones,
   * with values as parameters).
   */
  async query(
    text: string,
    values: readonly unknown[] = [],
    options: { affinity?: string } = {},
  ): Promise<pg.QueryResult> {
    if (this.closed) throw new Error('Client was closed and is not queryable');
    const slot = this.pick(options.affinity);
    slot.inFlight++;
    try {
      const client = slot.client ?? (await this.open(slot));
      this.cork(slot, client);
      return await client.query({ name: nameOf(text), text, values: values as unknown[] });
    } finally {
      slot.inFlight--;
    }
  }

  /** Connections open, and statements in flight on them. */
  stats(): { open: number; inFlight: number } {
    return {
      open: this.slots.filter((slot) => slot.client !== undefined).length,
      inFlight: this.slots.reduce((sum, slot) => sum + slot.inFlight, 0),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.slots.map(async (slot) => {
        const client = slot.client ?? (await slot.connecting?.catch(() => undefined));
        slot.client = undefined;
        await client?.end().catch(() => undefined);
      }),
    );
  }

  private pick(affinity: string | undefined): Slot {
    if (affinity !== undefined) return this.slots[hashOf(affinity) % this.slots.length] as Slot;
    // The least busy; among equals an open one, so that connections open only when the open ones are busy.
    let best = this.slots[0] as Slot;
    for (const slot of this.slots) {
      if (slot.inFlight < best.inFlight || (slot.inFlight === best.inFlight && slot.client && !best.client))
        best = slot;
    }
    return best;
  }

  private open(slot: Slot): Promise<pg.Client> {
    slot.connecting ??= (async () => {
      const client = new pg.Client({
        connectionString: this.options.connectionString,
        pipeline: true,
        statement_timeout: this.options.statementTimeoutMs,
        connectionTimeoutMillis: this.options.connectTimeoutMs,
      });
      // A connection that fails (the database restarted) fails its statements in flight; it is not reused.
      const drop = () => {
        if (slot.client === client) slot.client = undefined;
      };
      client.on('error', drop);
      client.on('end', drop);
      try {
        await client.connect();
      } catch (err) {
        client.end().catch(() => undefined);
        throw err;
      }
      if (this.closed) {
        await client.end().catch(() => undefined);
        throw new Error('Client was closed and is not queryable');
      }
      slot.client = client;
      return client;
    })().finally(() => {
      slot.connecting = undefined;
    });
    return slot.connecting;
  }

  /** Holds the connection's writes until the end of this turn of the event loop. */
  private cork(slot: Slot, client: pg.Client): void {
    if (slot.corked) return;
    const stream = (
      client as unknown as {
        connection: { stream: NodeJS.WritableStream & { cork(): void; uncork(): void } };
      }
    ).connection.stream;
    stream.cork();
    slot.corked = true;
    setImmediate(() => {
      slot.corked = false;
      stream.uncork();
    });
  }
}
