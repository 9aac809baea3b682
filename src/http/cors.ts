/**
 * CORS, with the `cors` package, for browser clients on the origins in AC_CORS_ORIGINS (`*` for any). Off
 * by default: without origins no middleware is mounted and no Access-Control-* header is ever sent. An
 * origin not in the list gets no CORS header either, so its browser refuses the answer. Preflights
 * (OPTIONS) from a listed origin are answered here with 204, /mcp included; other OPTIONS requests fall
 * through to the app's own 204 with Allow. Keys travel in headers, never cookies: no credentials mode.
 */
import cors from 'cors';
import type { RequestHandler } from 'express';

export const CORS_ALLOWED_HEADERS = [
  'X-API-Key',
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  'If-Match',
  'If-None-Match',
  'X-Request-Id',
  'Mcp-Protocol-Version',
  // MCP 2026-07-28: every request names its method (and tool, resource or prompt) in headers.
  'Mcp-Method',
  'Mcp-Name',
  'Last-Event-ID',
];

export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'Idempotent-Replayed',
  'ETag',
];

/** The CORS middleware for `origins`, or undefined when the list is empty (CORS off). */
export function corsFor(origins: readonly string[]): RequestHandler | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const answer = cors({
    origin: any ? '*' : true, // true: echo the request's Origin, which has been checked below
    methods: ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    // The answer depends on Origin: caches must keep one copy per origin.
    if (!any) res.vary('Origin');
    const origin = req.headers.origin;
    if (origin === undefined || !(any || allowed.has(origin))) return next();
    answer(req, res, next);
  };
}
