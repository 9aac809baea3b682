/**
 * The Express application: one layer for what every request passes through (request id and log, drain
 * tracking, security headers, CORS, rate limits, JSON body), then the route table (every operation and
 * discovery document, with OPTIONS and 405 for known paths), the MCP endpoint, a JSON 404, and the one
 * error handler.
 */
import express, { type Express, type RequestHandler } from 'express';
import type { RateLimitConfig, TrustProxySetting } from '../config.js';
import type { Core } from '../core/core.js';
import { type Operation, restOperations } from '../core/operation-table.js';
import type { Logger } from '../logger.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { AuthorizationServer, OAuthLimits } from '../oauth/authorization-server.js';
import type { WindowCounters } from '../store/window-counters.js';
import { corsFor } from './cors.js';
import { DOCUMENTS, type Readiness } from './discovery.js';
import { WEB_PAGES } from './document-context.js';
import type { Drain } from './drain.js';
import { errorHandler } from './error-handler.js';
import { jsonBody } from './json-body.js';
import { metricsRoute } from './metrics-route.js';
import { addOperationRoutes, notFoundRoute } from './operation-routes.js';
import { publicBaseUrl } from './public-url.js';
import { createRateLimits } from './rate-limits.js';
import { acceptAccessTokens } from './request-identity.js';
import { requestLog } from './request-log.js';
import { requestMetrics } from './request-metrics.js';
import { createRouteTable } from './route-table.js';
import { securityHeaders } from './security-headers.js';
import { sequence } from './sequence.js';
import { webRoutes } from './web-routes.js';

export interface HttpAppOptions {
  core: Core;
  operations: readonly Operation[];
  logger: Logger;
  bodyMaxBytes: number;
  publicUrl: string | undefined;
  adminToken: string | undefined;
  /** Mounts further routes (the MCP endpoint) before the JSON 404. */
  extraRoutes?: (app: Express) => void;
  /**
   * The authorization server (src/oauth), mounted before the API's rate limits and JSON body parser (it
   * reads its own form bodies and has limits of its own); its access tokens are then accepted at /mcp.
   */
  oauth?: { room: AuthorizationServer };
  /** Rate and registration limits (src/http/rate-limits.ts); none unless given and enabled. */
  rateLimit?: RateLimitConfig;
  /** Counters every instance shares (PostgreSQL), for the rate limits; in memory per process without. */
  counters?: WindowCounters;
  /** Express's `trust proxy` setting: which X-Forwarded-For hops give the client address. */
  trustProxy?: TrustProxySetting;
  /** Origins allowed to call from a browser (CORS); none by default. */
  corsOrigins?: readonly string[];
  /** Graceful shutdown: tracks requests in flight (src/http/drain.ts). */
  drain?: Drain;
  /** Whether the service takes work, for GET /api/ac/ready; always ready when not given. */
  readiness?: () => Promise<Readiness>;
  /** The service's metrics: every request is counted; /metrics serves them when `metricsToken` is set. */
  metrics?: ServiceMetrics;
  /** AC_METRICS_TOKEN: the bearer token /metrics needs; /metrics is absent (404) without it. */
  metricsToken?: string | undefined;
}

const NO_OAUTH_LIMITS: OAuthLimits = {
  any: [],
  authorize: [],
  token: [],
  registration: [],
  signIn: [],
  register: [],
};

export function createHttpApp(options: HttpAppOptions): Express {
  const { core, logger } = options;
  const operations = restOperations(options.operations);
  const app = express();
  app.disable('x-powered-by');
  // Every answer carries a live balance or timestamp: an ETag (a hash of each body) would never match.
  app.set('etag', false);
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);
  const rateLimits = options.rateLimit?.enabled
    ? createRateLimits({
        core,
        logger,
        limits: options.rateLimit,
        trustProxy: options.trustProxy ?? false,
        unlimitedPaths: DOCUMENTS.map((doc) => doc.path),
        unlimitedPrefixes: WEB_PAGES.map((page) => page.path),
        operations,
        ...(options.counters ? { counters: options.counters } : {}),
      })
    : undefined;
  const cors = corsFor(options.corsOrigins ?? []);
  app.use(
    sequence([
      requestLog(logger),
      ...(options.metrics ? [requestMetrics(options.metrics)] : []),
      ...(options.drain ? [options.drain.middleware] : []),
      securityHeaders(),
      ...(cors ? [cors] : []),
    ]),
  );
  const room = options.oauth?.room;
  if (room) {
    room.mount(app, rateLimits?.oauth ?? NO_OAUTH_LIMITS);
    acceptAccessTokens(app, (token) => room.accessTokens.verify(token));
  }
  app.use(sequence([...(rateLimits ? rateLimits.api : []), jsonBody(options.bodyMaxBytes)]));
  // The console's Connected apps routes take the API key, under the API's limits.
  room?.mountApi(app);
  if (rateLimits?.register) app.post(rateLimits.register.path, rateLimits.register.handlers);

  const readiness = options.readiness ?? (async () => 'ready' as const);
  const routes = createRouteTable();
  addOperationRoutes(routes, core, operations, options.adminToken, room?.revokeAccount);
  for (const doc of DOCUMENTS) {
    const serve: RequestHandler = async (req, res) => {
      res.locals.operation = doc.name;
      const body = await doc.render({
        baseUrl: publicBaseUrl(req, options.publicUrl),
        operations,
        documents: DOCUMENTS,
        readiness,
        adminApi: Boolean(options.adminToken),
      });
      const answer = doc.respond?.(body);
      if (answer) res.status(answer.status).set(answer.headers ?? {});
      if (doc.output === 'text') res.type('text/plain; charset=utf-8').send(body);
      else res.json(body);
    };
    routes.add('GET', doc.path, serve);
    routes.add('HEAD', doc.path, serve);
  }
  app.use(routes.middleware);
  app.use(webRoutes());
  if (options.metrics && options.metricsToken) app.use(metricsRoute(options.metrics, options.metricsToken));
  options.extraRoutes?.(app);
  app.use((req) => {
    throw notFoundRoute(req);
  });
  app.use(errorHandler(logger));
  return app;
}
