/**
 * One log line per request: method, path (without the query string, which may hold agent_key),
 * status, duration, operation and agent id. Never a key, a header or a body.
 */
import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';

export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round(ms * 10) / 10,
          op: res.locals.operation,
          agent: res.locals.agentId,
        },
        'request',
      );
    });
    next();
  };
}
