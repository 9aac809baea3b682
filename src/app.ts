/**
 * The composition root: builds the store, the cache, the upstream providers and the core from Config,
 * and starts the HTTP server. Faces get everything they need from here; nothing is built twice.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeLiveCache } from './cache/node-live-cache.js';
import type { Config } from './config.js';
import type { Clock } from './core/clock.js';
import { type Core, createCore } from './core/core.js';
import type { LiveDataSource } from './core/live-port.js';
import { createOperations, type Operation } from './core/operations.js';
import type { StorePort } from './core/store-port.js';
import { answerClientErrorsWithJson } from './http/client-error.js';
import { createHttpApp } from './http/create-http-app.js';
import { readinessOf } from './http/discovery.js';
import { createDrain } from './http/drain.js';
import { createLiveDataSource } from './live/live-data-source.js';
import { createLogger, type Logger } from './logger.js';
import { type McpHttp, mountMcpHttp } from './mcp/mcp-http.js';
import type { DataDirLock } from './store/data-dir-lock.js';
import { openJsonFileStore } from './store/json-file-store.js';

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
  lock: DataDirLock;
  close(): Promise<void>;
}

export async function openService(config: Readonly<Config>, options: ServiceOptions): Promise<Service> {
  const logger = options.logger ?? createLogger(config.logLevel, { format: config.logFormat });
  const { store, lock } = await openJsonFileStore(config.dataDir, {
    pid: process.pid,
    command: options.command,
    startedAt: new Date().toISOString(),
  });
  const cache = createNodeLiveCache(config.limits.cacheMinutesMax);
  const core = createCore({
    store,
    cache,
    live: options.live ?? createLiveDataSource(config.live),
    limits: config.limits,
    ...(options.clock ? { clock: options.clock } : {}),
  });
  return {
    config,
    core,
    operations: createOperations(core.schemas),
    store,
    logger,
    lock,
    close: async () => {
      cache.close();
      await store.close();
    },
  };
}

export interface RunningServer {
  service: Service;
  server: Server;
  url: string;
  close(): Promise<void>;
}

export async function startServer(config: Readonly<Config>, options: ServiceOptions): Promise<RunningServer> {
  const service = await openService(config, options);
  let mcp: McpHttp | undefined;
  const drain = createDrain();
  const app = createHttpApp({
    core: service.core,
    operations: service.operations,
    logger: service.logger,
    bodyMaxBytes: config.bodyMaxBytes,
    publicUrl: config.publicUrl,
    adminToken: config.adminToken,
    rateLimit: config.rateLimit,
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    drain,
    readiness: () => readinessOf(drain.draining, service.store.status()),
    extraRoutes: (express) => {
      mcp = mountMcpHttp(express, service, {
        host: config.host,
        publicUrl: config.publicUrl,
        idleMs: config.mcpSessionIdleSeconds * 1000,
        maxSessions: config.mcpMaxSessions,
      });
    },
  });
  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      // Slow clients: headers must arrive within headersTimeoutMs, the whole request within requestTimeoutMs
      // (answered 408). Node checks these on an interval (30 s by default), so check at a quarter of the
      // headers timeout, between 100 ms and 5 s.
      const s = createServer(
        {
          headersTimeout: config.headersTimeoutMs,
          requestTimeout: config.requestTimeoutMs,
          connectionsCheckingInterval: Math.min(
            5_000,
            Math.max(100, Math.round(config.headersTimeoutMs / 4)),
          ),
        },
        app,
      );
      answerClientErrorsWithJson(s);
      s.once('error', reject);
      s.listen(config.port, config.host, () => {
        s.off('error', reject);
        resolve(s);
      });
    });
  } catch (err) {
    await service.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  await service.lock.update({
    pid: process.pid,
    command: options.command,
    url,
    startedAt: new Date().toISOString(),
  });
  service.logger.info({ url, dataDir: config.dataDir }, `listening on ${url}`);
  let closing: Promise<void> | undefined;
  return {
    service,
    server,
    url,
    // Graceful: stop accepting, let requests in flight finish within shutdownTimeoutMs (ending MCP's
    // long-lived event streams at once), cut off the rest, close the MCP sessions, then flush and close the
    // store, which releases the DATA_DIR lock.
    close: () =>
      (closing ??= (async () => {
        const { cutOff } = await drain.close(server, config.shutdownTimeoutMs, () => mcp?.closeStreams());
        if (cutOff > 0) {
          service.logger.warn(
            { cutOff, timeoutMs: config.shutdownTimeoutMs },
            'requests still running at the shutdown timeout were cut off',
          );
        }
        await mcp?.close();
        await service.close();
      })()),
  };
}
