/**
 * The REST routes as one table looked up once per request, instead of Express's walk through one layer
 * per route (path-to-regexp on each): a route is found by method and path, matched as Express matches by
 * default (case-insensitive, a trailing slash ignored). A known path asked with another method is told
 * which methods it has (OPTIONS: 204 with Allow; anything else: 405); an unknown path goes on to the next
 * handler (the MCP endpoint, then the JSON 404).
 */
import type { RequestHandler } from 'express';
import { AppError } from '../core/errors.js';

/** The form a path is looked up in: lower case, without a trailing slash (the root stays "/"). */
export function routePath(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}

export interface RouteTable {
  add(method: string, path: string, handler: RequestHandler): void;
  /** The one middleware that dispatches to the table. */
  readonly middleware: RequestHandler;
}

export function createRouteTable(): RouteTable {
  /** path → method → handler. */
  const paths = new Map<string, Map<string, RequestHandler>>();

  const middleware: RequestHandler = (req, res, next) => {
    const path = routePath(req.path);
    const methods = paths.get(path);
    if (!methods) return next();
    // As Express does, HEAD falls back to the GET handler (Node drops the body).
    const handler = methods.get(req.method) ?? (req.method === 'HEAD' ? methods.get('GET') : undefined);
    if (handler) return handler(req, res, next);
    const allowed = [...methods.keys()];
    if (req.method === 'OPTIONS') {
      res
        .set('Allow', ['OPTIONS', ...allowed].join(', '))
        .status(204)
        .end();
      return;
    }
    throw new AppError(
      'method_not_allowed',
      `${req.method} is not allowed on ${req.path}; use ${allowed.filter((m) => m !== 'HEAD').join(' or ')}.`,
      { allow: allowed.join(', ') },
    );
  };

  return {
    add(method, path, handler) {
      const key = routePath(path);
      const methods = paths.get(key) ?? new Map<string, RequestHandler>();
      if (methods.has(method)) throw new Error(`route ${method} ${path} is declared twice`);
      methods.set(method, handler);
      paths.set(key, methods);
    },
    middleware,
  };
}
