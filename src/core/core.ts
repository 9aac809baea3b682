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
import type { CacheState } from './model.js';
import { createOperatorViews } from './operator-views.js';
import { createSchemas } from './schemas.js';
import { SemanticIndex, type VectorStore } from './semantic-index.js';
import type { StorePort } from './store-port.js';
import { createUsage, LiveUsageTally } from './usage.js';

export interface CoreDeps {
  store: StorePort;
  cache: LiveCache;
  live: LiveDataSource;
  clock?: Clock;
  limits?: Limits;
  /** Semantic search's model (the in-process one, or AC_EMBEDDINGS_URL's); without it, search is lexical only. */
  embedder?: Embedder;
  /** Where vectors are kept with their memories (PostgreSQL); without it, per process. */
  vectors?: VectorStore;
  /** Told of each batch of memories embedded (the debug log). */
  onEmbedded?: (batch: { embedded: number; ms: number; queued: number }) => void;
  /** Told how each live-data answer was served (for metrics). */
  onLiveAnswer?: (state: CacheState) => void;
  /** Failures of background work (embedding, usage counts), for the log: the error and what failed. */
  onBackgroundError?: (err: unknown, work: string) => void;
}

export function createCore(deps: CoreDeps) {
  const clock = deps.clock ?? systemClock;
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const ledger = createLedger(deps.store, clock, limits);
  const onBackgroundError = deps.onBackgroundError ?? (() => undefined);
  const tally = new LiveUsageTally(deps.store, clock, (err) => onBackgroundError(err, 'usage counts: flush'));
  const liveData = createLiveData(deps.store, ledger, deps.cache, deps.live, clock);
  const semantic = deps.embedder
    ? new SemanticIndex(
        deps.embedder,
        (err) => onBackgroundError(err, 'semantic search: embedding'),
        deps.vectors,
        deps.onEmbedded,
      )
    : undefined;
  return {
    limits,
    schemas: createSchemas(limits),
    accounts: createAccounts(deps.store, ledger, clock),
    memories: createMemories(deps.store, ledger, clock, limits, semantic),
    transfer: createMemoryTransfer(deps.store, ledger, clock, limits, semantic),
    /** Semantic search's vectors, unless AC_EMBEDDINGS=off. */
    semantic,
    liveData: {
      /** Live data, each answer counted by how it was served (usage.ts). */
      fetchData: async (...args: Parameters<typeof liveData.fetchData>) => {
        const answer = await liveData.fetchData(...args);
        tally.count(args[0], answer.cache_state);
        deps.onLiveAnswer?.(answer.cache_state);
        return answer;
      },
    },
    usage: createUsage(deps.store, ledger, clock, tally),
    /** Ends the core's background work: adds the pending usage counts to the store (before it closes). */
    close: () => tally.close(),
    operator: createOperatorViews(deps.store, deps.live, deps.cache, clock, tally),
    idempotency: createIdempotency(deps.store, clock),
  };
}

export type Core = ReturnType<typeof createCore>;
