/**
 * Security headers on every answer: the set OWASP's REST Security Cheat Sheet lists for an API, produced by
 * helmet: a Content-Security-Policy that allows nothing (`default-src 'none'; frame-ancestors 'none'`: no
 * answer is a page to render or frame), nosniff, X-Frame-Options DENY, HSTS (honoured only over HTTPS, i.e.
 * behind a TLS proxy), plus no referrer, Cross-Origin-Resource-Policy same-origin, and `Cache-Control:
 * no-store` (answers hold balances and memories: no cache on the way may keep them). helmet's headers that
 * only matter for HTML pages in a browser window (X-DNS-Prefetch-Control, X-Download-Options,
 * X-Permitted-Cross-Domain-Policies, Origin-Agent-Cluster, X-XSS-Protection, Cross-Origin-Opener-Policy)
 * are not sent: on a JSON API they do nothing, and each header costs every response its bytes and checks.
 * The set is taken from helmet once at start-up and then set on each response in one loop, because helmet
 * itself runs a dozen middlewares per request and rebuilds the CSP string every time.
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
    crossOriginOpenerPolicy: false,
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false,
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
  return [...headers, ['Cache-Control', 'no-store']];
}

export function securityHeaders(): RequestHandler {
  const headers = helmetHeaders();
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
