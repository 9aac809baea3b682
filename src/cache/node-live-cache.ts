/**
 * The live-data cache on node-cache. Entries live as long as the longest freshness a caller may ask
 * for (cache_minutes maximum); the core decides per request whether an entry is fresh enough.
 * Entries are frozen and not cloned: nobody mutates them.
 */
import NodeCache from 'node-cache';
import type { CachedLiveResult, LiveCache } from '../core/live-port.js';

export function createNodeLiveCache(maxAgeMinutes: number, maxKeys = 50_000): LiveCache {
  const cache = new NodeCache({ stdTTL: maxAgeMinutes * 60, checkperiod: 600, useClones: false, maxKeys });
  return {
    get: (key) => cache.get<CachedLiveResult>(key),
    set: (key, value) => {
      if (cache.getStats().keys >= maxKeys && !cache.has(key)) cache.del(cache.keys()[0] ?? '');
      cache.set(key, Object.freeze(value));
    },
    close: () => cache.close(),
  };
}
