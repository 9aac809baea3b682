/**
 * The domain core, assembled from its ports. Every face (REST, MCP, CLI) drives this one object, so
 * they share one store and one ledger.
 */
import { createAccounts } from './accounts.js';
import { type Clock, systemClock } from './clock.js';
import type { Embedder } from './embedding-port.js';
import { createIdempotency } from './idempotency.js';
import { createLedger } from './ledger.js';
import { DEFAULT_LIMITS, type Limits } from './limits.js';
import { createLiveData } from './live-data.js';
import type { LiveCache, LiveDataSource } from './live-port.js';
import { createMemories } from './memories.js';
import { createMemoryTransfer } from './memory-transfer.js';
import { createSchemas } from './schemas.js';
import { SemanticIndex } from './semantic-index.js';
import type { StorePort } from './store-port.js';

export interface CoreDeps {
  store: StorePort;
  cache: LiveCache;
  live: LiveDataSource;
  clock?: Clock;
  limits?: Limits;
  /** Semantic search's embeddings (AC_EMBEDDINGS_URL); without it, search is lexical only. */
  embedder?: Embedder;
  /** Failures of background work (embedding), for the log. */
  onBackgroundError?: (err: unknown) => void;
}

export function createCore(deps: CoreDeps) {
  const clock = deps.clock ?? systemClock;
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const ledger = createLedger(deps.store, clock, limits);
  const semantic = deps.embedder
    ? new SemanticIndex(deps.embedder, deps.onBackgroundError ?? (() => undefined))
    : undefined;
  return {
    limits,
    schemas: createSchemas(limits),
    accounts: createAccounts(deps.store, ledger, clock),
    memories: createMemories(deps.store, ledger, clock, limits, semantic),
    transfer: createMemoryTransfer(deps.store, ledger, clock, limits, semantic),
    /** Semantic search's vectors, when AC_EMBEDDINGS_URL is set. */
    semantic,
    liveData: createLiveData(deps.store, ledger, deps.cache, deps.live, clock),
    idempotency: createIdempotency(deps.store, clock),
  };
}

export type Core = ReturnType<typeof createCore>;
