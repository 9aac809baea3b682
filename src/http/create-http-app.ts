/**
 * The Express application: request id and log, drain tracking, security headers, CORS, body rules (JSON
 * only, size limit), the discovery documents, one route per operation, 405 for a known path with another
 * method, JSON 404 for anything else, and the one error handler.
 */
import express, { type Express, type RequestHandler } from 'express';
import type { RateLimitConfig, TrustProxySetting } from '../config.js';
import type { Core } from '../core/core.js';
import { AppError } from '../core/errors.js';
import { type Operation, type RestOperation, restOperations } from '../core/operations.js';
import type { Logger } from '../logger.js';
import { corsFor } from './cors.js';
import { DOCUMENTS, type Readiness } from './discovery.js';
import type { Drain } from './drain.js';
import { errorHandler } from './error-handler.js';
import { mountOperationRoutes, notFoundRoute } from './operation-routes.js';
import { publicBaseUrl } from './public-url.js';
import { createRateLimits } from './rate-limits.js';
import { requestLog } from './request-log.js';
import { securityHeaders } from './security-headers.js';

export interface HttpAppOptions {
  core: Core;
  operations: readonly Operation[];
  logger: Logger;
  bodyMaxBytes: number;
  publicUrl: string | undefined;
  adminToken: string | undefined;
  /** Mounts further routes (the MCP endpoint) before the JSON 404. */
  extraRoutes?: (app: Express) => void;
  /** Rate and registration limits (src/http/rate-limits.ts); none unless given and enabled. */
  rateLimit?: RateLimitConfig;
  /** Express's `trust proxy` setting: which X-Forwarded-For hops give the client address. */
  trustProxy?: TrustProxySetting;
  /** Origins allowed to call from a browser (CORS); none by default. */
  corsOrigins?: readonly string[];
  /** Graceful shutdown: tracks requests in flight (src/http/drain.ts). */
  drain?: Drain;
  /** Whether the service takes work, for GET /api/ac/ready; always ready when not given. */
  readiness?: () => Readiness;
}

const JSON_TYPES = ['application/json', 'application/*+json'];

/** A POST or DELETE that carries a body must carry JSON. */
const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody =
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  if (req.method !== 'GET' && req.method !== 'HEAD' && hasBody && !req.is(JSON_TYPES)) {
    throw new AppError(
      'unsupported_media_type',
      `The body must be JSON: send it with Content-Type: application/json (got ${req.get('content-type') ?? 'none'}).`,
    );
  }
  next();
};

function methodsByPath(
  operations: readonly RestOperation[],
  adminToken: string | undefined,
): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const doc of DOCUMENTS) map.set(doc.path, ['GET', 'HEAD']);
  for (const op of operations) {
    if (op.auth === 'admin' && adminToken === undefined) continue;
    const methods = map.get(op.http.path) ?? [];
    methods.push(op.http.method);
    map.set(op.http.path, methods);
  }
  return map;
}

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
        operations,
      })
    : undefined;
  app.use(requestLog(logger));
  if (options.drain) app.use(options.drain.middleware);
  app.use(securityHeaders());
  const cors = corsFor(options.corsOrigins ?? []);
  if (cors) app.use(cors);
  if (rateLimits) app.use(rateLimits.api);
  app.use(requireJsonBody);
  app.use(express.json({ limit: options.bodyMaxBytes, strict: true, type: JSON_TYPES }));
  if (rateLimits?.register) app.post(rateLimits.register.path, rateLimits.register.handlers);

  // One lookup each for OPTIONS and for a known path with another method, rather than a layer per path.
  const allowed = methodsByPath(operations, options.adminToken);
  app.use((req, res, next) => {
    const methods = req.method === 'OPTIONS' ? allowed.get(req.path) : undefined;
    if (!methods) return next();
    res
      .set('Allow', ['OPTIONS', ...methods].join(', '))
      .status(204)
      .end();
  });
  const readiness = options.readiness ?? (() => 'ready' as const);
  const router = express.Router();
  mountOperationRoutes(router, core, operations, options.adminToken);
  for (const doc of DOCUMENTS) {
    router.get(doc.path, (req, res) => {
      res.locals.operation = doc.name;
      const body = doc.render({
        baseUrl: publicBaseUrl(req, options.publicUrl),
        operations,
        documents: DOCUMENTS,
        readiness,
      });
      const answer = doc.respond?.(body);
      if (answer) res.status(answer.status).set(answer.headers ?? {});
      if (doc.output === 'text') res.type('text/plain; charset=utf-8').send(body);
      else res.json(body);
    });
  }
  app.use(router);
  app.use((req, _res, next) => {
    const methods = allowed.get(req.path);
    if (!methods) return next();
    throw new AppError(
      'method_not_allowed',
      `${req.method} is not allowed on ${req.path}; use ${methods.filter((m) => m !== 'HEAD').join(' or ')}.`,
      { allow: methods.join(', ') },
    );
  });
  options.extraRoutes?.(app);
  app.use((req) => {
    throw notFoundRoute(req);
  });
  app.use(errorHandler(logger));
  return app;
}
