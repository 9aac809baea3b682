/** A LiveDataSource for tests of caching and charging: answers from a script and counts its calls. */
import { AppError } from '../../src/core/errors.js';
import type { LiveDataSource, LiveResult } from '../../src/core/live-port.js';
import type { JsonObject, QueryType } from '../../src/core/model.js';

/**
 * Data in the published shape of `type` (what a provider normalises into), naming the query and `n`, so
 * that a test can tell which fetch an answer came from, and a client that validates answers against the
 * published schemas (the MCP SDK's) accepts it.
 */
export function sampleLiveData(type: QueryType, query: string, n: number): JsonObject {
  switch (type) {
    case 'weather':
      return {
        location: {
          name: query,
          admin1: null,
          country: null,
          country_code: null,
          latitude: 0,
          longitude: 0,
          timezone: null,
        },
        temperature_c: n,
        feels_like_c: null,
        humidity_pct: null,
        wind_kph: null,
        condition: 'Clear sky',
        condition_code: 0,
        observed_at: '2026-11-21T11:00:00.000Z',
        alternatives: [],
      };
    case 'price':
      return {
        asset: { name: query, symbol: 'FAKE', kind: 'crypto' },
        price: n,
        currency: 'USD',
        as_of: null,
      };
    case 'news':
      return {
        items: [
          {
            title: `${query} (${n})`,
            url: 'https://news.example/1',
            published_at: '2026-11-21T11:00:00.000Z',
            source: 'news.example',
          },
        ],
      };
    case 'search':
      return {
        results: [{ position: 1, title: query, url: 'https://search.example/1', snippet: `fetch ${n}` }],
        coverage: 'web',
      };
  }
}

export class FakeLiveSource implements LiveDataSource {
  calls: { type: QueryType; query: string }[] = [];
  /** What the next calls do; by default, a result naming the query (sampleLiveData). */
  next: ((type: QueryType, query: string) => Promise<LiveResult>) | undefined;

  async fetch(type: QueryType, query: string): Promise<LiveResult> {
    this.calls.push({ type, query });
    if (this.next) return this.next(type, query);
    return {
      data: sampleLiveData(type, query, this.calls.length),
      source: 'fake',
      asOf: '2026-11-21T11:00:00.000Z',
    };
  }

  failWith(code: 'upstream_failed' | 'upstream_timeout' | 'not_found'): void {
    this.next = async () => {
      throw new AppError(code, `fake ${code}`);
    };
  }
}
