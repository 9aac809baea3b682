/**
 * Every request gets an id: the client's `X-Request-Id` when it is a sane token (1-128 characters of
 * A-Z a-z 0-9 . _ : -), else a new UUID. The id is sent back in `X-Request-Id` on every answer and is on
 * every log line written for the request, through a pino child logger (`requestLogger(res)`).
 * One log line per request: method, path (without the query string, which may hold agent_key), status,
 * duration, operation and agent id. Never a key, a header or a body.
 */
import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Logger } from '../logger.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's when sane, else a fresh one. */
export function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * The logger for the request being answered on `res`: every line carries its `reqId`. The child logger is
 * made on first use, as most requests log only their request line.
 */
export function requestLogger(res: Response, fallback: Logger): Logger {
  const id = res.locals.requestId as string | undefined;
  if (id === undefined) return fallback;
  res.locals.log ??= fallback.child({ reqId: id });
  return res.locals.log as Logger;
}

export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const id = requestIdOf(req.headers['x-request-id']);
    res.locals.requestId = id;
    res.setHeader(REQUEST_ID_HEADER, id);
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // The fields a child logger would bind, in the same place on the line, without making one.
      logger.info(
        {
          reqId: id,
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
