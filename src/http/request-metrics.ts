/**
 * Counts each HTTP request in the service's metrics when its answer is sent: face `rest`, the operation it
 * was routed to (`other` when none: an unknown path, or a request a rate limit stopped first), `ok` or the
 * answer's error code (`aborted` when the client left first), its duration, and the cents its operation
 * charged. Requests of the MCP transport
 * (/mcp) are left to the MCP face, which counts each tool call.
 */
import type { RequestHandler } from 'express';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { MCP_PATH } from '../server-paths.js';

export function requestMetrics(metrics: ServiceMetrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    // 'close' comes after the answer is sent, and also when the client went away before it was.
    res.once('close', () => {
      const operation = res.locals.operation as string | undefined;
      if (operation === undefined && req.path === MCP_PATH) return;
      const code = res.locals.errorCode as string | undefined;
      const sent = code ?? (res.statusCode < 400 ? 'ok' : String(res.statusCode));
      metrics.request({
        face: 'rest',
        operation: operation ?? 'other',
        status: res.writableFinished ? sent : 'aborted',
        seconds: Number(process.hrtime.bigint() - started) / 1e9,
        costCents: (res.locals.costCents as number | undefined) ?? 0,
      });
    });
    next();
  };
}
