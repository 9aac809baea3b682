/**
 * The composition root: builds the store (through `openStore`), the cache, the upstream providers and the
 * core from Config. It imports no face, so `agent-context mcp` over stdio never loads Express and the HTTP
 * server (src/http/http-server.ts) gets everything it needs from here; nothing is built twice.
 */

import { createEmptyLiveCache } from './cache/empty-live-cache.js';
import { createNodeLiveCache } from './cache/node-live-cache.js';
import type { Config } from './config.js';
import type { Clock } from './core/clock.js';
import { type Core, createCore } from './core/core.js';
import { AppError } from './core/errors.js';
import { DEFAULT_LIMITS, type Limits } from './core/limits.js';
import type { LiveDataSource } from './core/live-port.js';
import type { CacheState } from './core/model.js';
import { createOperations, type Operation } from './core/operation-table.js';
import type { StorePort } from './core/store-port.js';
import { createHttpEmbedder } from './embeddings/http-embedder.js';
import { createLocalEmbedder } from './embeddings/local-embedder.js';
import { createLiveDataSource } from './live/live-data-source.js';
import { createLogger, type Logger } from './logger.js';
import { ServiceMetrics, timedStore } from './metrics/service-metrics.js';
import type { DataDirLock } from './store/json/data-dir-lock.js';
import type { OAuthRecords } from './store/oauth-records.js';
import { openStore } from './store/open-store.js';
import { unavailableStore } from './store/unavailable-store.js';
import type { WindowCounters } from './store/window-counters.js';

export interface ServiceOptions {
  /** What this process runs, recorded in the DATA_DIR lock. */
  command: string;
  clock?: Clock;
  /** Replaces the real upstream providers (tests). */
  live?: LiveDataSource;
  logger?: Logger;
}

export interface Service {
  config: Readonly<Config>;
  core: Core;
  operations: readonly Operation[];
  /** The store under the core, for operator tools and tests; faces go through the core. */
  store: StorePort;
  logger: Logger;
  /** The DATA_DIR lock of the JSON file store; none on PostgreSQL. */
  lock?: DataDirLock;
  /** The rate limits' counters shared by every instance: PostgreSQL only (one process counts in memory). */
  counters?: WindowCounters;
  /** The operator's metrics: made only when they are served (`serve` with AC_METRICS_TOKEN set). */
  metrics?: ServiceMetrics;
  /** The authorization server's records (src/oauth), in the same store. */
  oauthRecords?: OAuthRecords;
  close(): Promise<void>;
}

export function serviceLogger(config: Readonly<Config>): Logger {
  return createLogger(config.logLevel, { format: config.logFormat });
}

export async function openService(config: Readonly<Config>, options: ServiceOptions): Promise<Service> {
  const logger = options.logger ?? serviceLogger(config);
  const clock = options.clock;
  const opened = await openStore(
    config,
    { pid: process.pid, command: options.command, startedAt: new Date().toISOString() },
    {
      ...(clock ? { now: () => clock.now() } : {}),
      onSweep: (round) => {
        if ('error' in round)
          logger.warn({ err: round.error }, 'background clean-up failed; next round retries');
        else if (round.ran) logger.debug({ removed: round.removed }, 'background clean-up');
      },
    },
  );
  const { lock, where, counters, liveCache, background, oauthRecords, vectors } = opened;
  // Metrics read the live source's breakers and buckets at scrape time; it is made below.
  let live: LiveDataSource | undefined;
  // Metrics cost every request a little: they are kept only where /metrics serves them.
  const metrics =
    options.command === 'serve' && config.metricsToken
      ? new ServiceMetrics(opened.store, () => live)
      : undefined;
  const store = metrics
    ? timedStore(opened.store, (seconds) => metrics.storeTransaction(seconds))
    : opened.store;
  background?.start();
  logger.info(
    config.database ? { database: where } : { dataDir: config.dataDir, dataDirFrom: config.dataDirFrom },
    `store: ${where}`,
  );
  // On PostgreSQL the cache every instance shares (this process's node-cache in front); else node-cache.
  const cache = liveCache ?? createNodeLiveCache(config.limits.cacheMinutesMax);
  live =
    options.live ??
    createLiveDataSource(config.live, metrics ? { onCall: (call) => metrics.upstreamCall(call) } : {});
  const core = createCore({
    store,
    cache,
    live,
    ...(metrics ? { onLiveAnswer: (state: CacheState) => metrics.liveAnswer(state) } : {}),
    limits: config.limits,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(config.embeddings === 'local'
      ? { embedder: createLocalEmbedder() }
      : config.embeddings
        ? { embedder: createHttpEmbedder(config.embeddings) }
        : {}),
    ...(vectors ? { vectors } : {}),
    onEmbedded: (batch) => logger.debug(batch, 'semantic search: embedded'),
    onBackgroundError: (err: unknown, work: string) =>
      logger.warn({ err: (err as Error)?.message ?? String(err) }, `${work} failed`),
  });
  if (core.semantic) {
    const { model, embedsOnWrite } = core.semantic;
    logger.info({ model, embedsOnWrite }, 'semantic search: on');
  }
  return {
    config,
    core,
    operations: createOperations(core.schemas),
    store,
    logger,
    ...(lock ? { lock } : {}),
    ...(counters ? { counters } : {}),
    ...(metrics ? { metrics } : {}),
    ...(oauthRecords ? { oauthRecords } : {}),
    close: async () => {
      await background?.stop();
      await core.close();
      cache.close();
      await store.close();
    },
  };
}

/**
 * The service over a store that cannot serve (the stdio server's "unavailable" mode, mcp/mcp-stdio.ts): the
 * same core and operations, every store call and upstream fetch failing with `message` (code `unavailable`).
 */
export function openUnavailableService(
  message: string,
  limits: Limits | undefined,
  logger: Logger,
): Pick<Service, 'core' | 'operations' | 'logger' | 'close'> {
  const core = createCore({
    store: unavailableStore(message),
    cache: createEmptyLiveCache(),
    live: { fetch: () => Promise.reject(new AppError('unavailable', message)) },
    limits: limits ?? DEFAULT_LIMITS,
  });
  return { core, operations: createOperations(core.schemas), logger, close: async () => undefined };
}
