/**
 * Security headers on every answer, as helmet configures them for a JSON API: a Content-Security-Policy that
 * allows nothing (`default-src 'none'; frame-ancestors 'none'`: no answer is a page to render or frame),
 * nosniff, no referrer, HSTS (honoured only over HTTPS, i.e. behind a TLS proxy), and the rest of helmet's
 * defaults. helmet decides the header set; it is taken from helmet once at start-up and then set on each
 * response in one loop, because helmet itself runs a dozen middlewares per request and rebuilds the CSP
 * string every time (its directives may be per-request functions; ours are constant).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/** The headers helmet sets with this service's options, in the order it sets them. */
export function helmetHeaders(): ReadonlyArray<readonly [string, string]> {
  const middleware = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
    },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
  });
  const headers = new Map<string, string>();
  const res = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.set(name, String(value));
      return this;
    },
    removeHeader(name: string) {
      headers.delete(name);
    },
    getHeader: (name: string) => headers.get(name),
  };
  let called = false;
  middleware({ method: 'GET', headers: {} } as IncomingMessage, res as unknown as ServerResponse, (err) => {
    if (err) throw err;
    called = true;
  });
  if (!called) throw new Error('helmet did not finish synchronously: the security headers cannot be taken');
  return [...headers];
}

export function securityHeaders(): RequestHandler {
  const headers = helmetHeaders();
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
