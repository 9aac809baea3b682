/**
 * The live-data cache of one process, on node-cache. Entries live as long as the longest freshness a caller
 * may ask for (cache_minutes maximum); the core decides per request whether an entry is fresh enough.
 * Entries are frozen and not cloned: nobody mutates them. One process needs no leases: the core's own
 * in-process single-flight is all there is, so this cache always leads and never waits. The PostgreSQL
 * cache (src/store/postgres/postgres-live-cache.ts) uses one of these as its first level.
 */
import NodeCache from 'node-cache';
import type { CachedLiveResult, LiveCache } from '../core/live-port.js';

const LEADER: Promise<'leader'> = Promise.resolve('leader');
const NOTHING: Promise<undefined> = Promise.resolve(undefined);
const DONE: Promise<void> = Promise.resolve();

export function createNodeLiveCache(maxAgeMinutes: number, maxKeys = 50_000): LiveCache {
  const cache = new NodeCache({ stdTTL: maxAgeMinutes * 60, checkperiod: 600, useClones: false, maxKeys });
  const peek = (key: string) => cache.get<CachedLiveResult>(key);
  return {
    peek,
    get: (key) => Promise.resolve(peek(key)),
    set: (key, value) => {
      if (cache.getStats().keys >= maxKeys && !cache.has(key)) cache.del(cache.keys()[0] ?? '');
      cache.set(key, Object.freeze(value));
      return DONE;
    },
    lead: () => LEADER,
    waitFor: () => NOTHING,
    endFlight: () => DONE,
    entries: () => Promise.resolve(cache.getStats().keys),
    close: () => cache.close(),
  };
}
