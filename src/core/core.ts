/**
 * The domain core, assembled from its ports. Every face (REST, MCP, CLI) drives this one object, so
 * they share one store and one ledger.
 */
import { createAccounts } from './accounts.js';
import { type Clock, systemClock } from './clock.js';
import { createIdempotency } from './idempotency.js';
import { createLedger } from './ledger.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { createLiveData } from './live-data.js';
import type { LiveCache, LiveDataSource } from './live-port.js';
import { createMemories } from './memories.js';
import { createMemoryTransfer } from './memory-transfer.js';
import { createSchemas } from './schemas.js';
import type { StorePort } from './store-port.js';

export interface CoreDeps {
  store: StorePort;
  cache: LiveCache;
  live: LiveDataSource;
  clock?: Clock;
  limits?: Limits;
}

export function createCore(deps: CoreDeps) {
  const clock = deps.clock ?? systemClock;
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const ledger = createLedger(deps.store, clock, limits);
  return {
    limits,
    schemas: createSchemas(limits),
    accounts: createAccounts(deps.store, ledger, clock),
    memories: createMemories(deps.store, ledger, clock, limits),
    transfer: createMemoryTransfer(deps.store, ledger, clock, limits),
    liveData: createLiveData(deps.store, ledger, deps.cache, deps.live, clock),
    idempotency: createIdempotency(deps.store, clock),
  };
}

export type Core = ReturnType<typeof createCore>;
