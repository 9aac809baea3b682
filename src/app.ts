/**
 * The composition root: builds the store, the cache, the upstream providers and the core from Config,
 * and starts the HTTP server. Faces get everything they need from here; nothing is built twice.
 */
import type { Server } from 'node:http';
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
  const logger = options.logger ?? createLogger(config.logLevel);
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
  const app = createHttpApp({
    core: service.core,
    operations: service.operations,
    logger: service.logger,
    bodyMaxBytes: config.bodyMaxBytes,
    publicUrl: config.publicUrl,
    adminToken: config.adminToken,
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
      const s = app.listen(config.port, config.host, (err?: Error) => (err ? reject(err) : resolve(s)));
    });
  } catch (err) {
    await service.close();
    throw err;
  }
  answerClientErrorsWithJson(server);
  // Slow clients: headers must arrive within headersTimeoutMs, the whole request within requestTimeoutMs.
  server.headersTimeout = config.headersTimeoutMs;
  server.requestTimeout = config.requestTimeoutMs;
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
  return {
    service,
    server,
    url,
    close: async () => {
      await mcp?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await service.close();
    },
  };
}
