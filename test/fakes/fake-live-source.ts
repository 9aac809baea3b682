/** A LiveDataSource for tests of caching and charging: answers from a script and counts its calls. */
import { AppError } from '../../src/core/errors.js';
import type { LiveDataSource, LiveResult } from '../../src/core/live-port.js';
import type { QueryType } from '../../src/core/model.js';

export class FakeLiveSource implements LiveDataSource {
  calls: { type: QueryType; query: string }[] = [];
  /** What the next calls do; by default, a result naming the query. */
  next: ((type: QueryType, query: string) => Promise<LiveResult>) | undefined;

  async fetch(type: QueryType, query: string): Promise<LiveResult> {
    this.calls.push({ type, query });
    if (this.next) return this.next(type, query);
    return { data: { echo: query, n: this.calls.length }, source: 'fake', asOf: '2026-11-21T11:00:00.000Z' };
  }

  failWith(code: 'upstream_failed' | 'upstream_timeout' | 'not_found'): void {
    this.next = async () => {
      throw new AppError(code, `fake ${code}`);
    };
  }
}
