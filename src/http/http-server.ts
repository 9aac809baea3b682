/**
 * The HTTP server: the REST API and MCP over Streamable HTTP on one Express app over a service the caller
 * opened (the composition root, src/service.ts, is not imported here), with request and header timeouts,
 * the server's URL recorded in the DATA_DIR lock, and a graceful close that also closes the service.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Config, ConfigError, storePlace } from '../config.js';
import type { Core } from '../core/core.js';
import type { Operation } from '../core/operation-table.js';
import type { StorePort } from '../core/store-port.js';
import type { Logger } from '../logger.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { resourceMetadataUrl } from '../oauth/oauth-settings.js';
import type { DataDirLock } from '../store/json/data-dir-lock.js';
import type { OAuthRecords } from '../store/oauth-records.js';
import type { WindowCounters } from '../store/window-counters.js';
import { answerClientErrorsWithJson } from './client-error.js';
import { createHttpApp } from './create-http-app.js';
import { readinessOf } from './discovery.js';
import { createDrain } from './drain.js';
import { expressMessages } from './express-messages.js';
import { type McpHttp, mountMcpHttp } from './mcp-endpoint.js';
import { openOAuthRoom } from './oauth-mount.js';

/** What the server needs of the service (src/service.ts builds it). */
export interface ServedService {
  config: Readonly<Config>;
  core: Core;
  operations: readonly Operation[];
  logger: Logger;
  store: Pick<StorePort, 'health'>;
  /** Counters every instance shares (PostgreSQL): the rate limits count there rather than per process. */
  counters?: WindowCounters;
  /** The operator's metrics: every request is counted in them. */
  metrics?: ServiceMetrics;
  /**
   * Where the server's URL is recorded for other processes on the host (the stdio bridge): the JSON file
   * store's DATA_DIR lock; none on PostgreSQL.
   */
  lock?: Pick<DataDirLock, 'update'>;
  /** Where the authorization server keeps its records (the store's); OAuth is on when Config says so. */
  oauthRecords?: OAuthRecords;
  close(): Promise<void>;
}

export interface RunningServer<S extends ServedService = ServedService> {
  service: S;
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Serves `service` until close(); `command` is recorded in the lock with the URL. */
export async function startServer<S extends ServedService>(
  service: S,
  options: { command: string },
): Promise<RunningServer<S>> {
  const { config } = service;
  let mcp: McpHttp | undefined;
  const drain = createDrain();
  const room = await openOAuthRoom(service);
  const app = createHttpApp({
    core: service.core,
    operations: service.operations,
    logger: service.logger,
    bodyMaxBytes: config.bodyMaxBytes,
    publicUrl: config.publicUrl,
    adminToken: config.adminToken,
    ...(service.metrics ? { metrics: service.metrics } : {}),
    metricsToken: config.metricsToken,
    rateLimit: config.rateLimit,
    ...(service.counters ? { counters: service.counters } : {}),
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    drain,
    readiness: async () => readinessOf(drain.draining, await service.store.health()),
    ...(room ? { oauth: { room } } : {}),
    extraRoutes: (express) => {
      mcp = mountMcpHttp(express, service, {
        host: config.host,
        publicUrl: config.publicUrl,
        bodyMaxBytes: config.bodyMaxBytes,
        ...(room ? { oauth: { resourceMetadataUrl: resourceMetadataUrl(room.settings) } } : {}),
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
          ...expressMessages(app),
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
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL' || code === 'EACCES') {
      throw new ConfigError(
        `Cannot listen on ${config.host}:${config.port} (${code}): ` +
          (code === 'EADDRINUSE'
            ? 'another program uses that port; stop it, or choose another with PORT or --port.'
            : 'choose another address or port with HOST/--host and PORT/--port.'),
      );
    }
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  await service.lock?.update({
    pid: process.pid,
    command: options.command,
    url,
    startedAt: new Date().toISOString(),
  });
  service.logger.info({ url, store: storePlace(config) }, `listening on ${url}`);
  let closing: Promise<void> | undefined;
  return {
    service,
    server,
    url,
    // Graceful: stop accepting, let requests in flight finish within shutdownTimeoutMs, cut off the rest,
    // close the MCP handler, then flush and close the store, which releases the DATA_DIR lock.
    close: () =>
      (closing ??= (async () => {
        const { cutOff } = await drain.close(server, config.shutdownTimeoutMs);
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
