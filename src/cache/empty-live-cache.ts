/** A live-data cache that keeps nothing: for a server that answers every call with an error (no store). */
import type { LiveCache } from '../core/live-port.js';

export function createEmptyLiveCache(): LiveCache {
  return {
    peek: () => undefined,
    get: async () => undefined,
    set: async () => undefined,
    lead: async () => 'leader',
    waitFor: async () => undefined,
    endFlight: async () => undefined,
    entries: async () => 0,
    close: () => undefined,
  };
}
