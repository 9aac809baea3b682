/**
 * The one place an error becomes an HTTP response: AppError → its mapped status and JSON body; errors
 * raised by Express and body-parser (bad JSON, too large, bad encoding) → the matching AppError; anything
 * else → a logged 500 with a generic sentence. Never an HTML page, never a stack.
 */
import type { ErrorRequestHandler, Response } from 'express';
import { AppError, toAppError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { httpStatusOf } from './http-status.js';
import { requestLogger } from './request-log.js';

interface HttpishError {
  type?: string;
  status?: number;
  expose?: boolean;
  limit?: number;
  code?: string;
}

function fromExpressError(err: unknown): AppError | undefined {
  const e = err as HttpishError;
  if (typeof e?.code === 'string' && e.code.startsWith('Z_')) {
    return new AppError(
      'invalid_input',
      'The request body is not valid gzip, deflate or br data as its Content-Encoding says; compress it correctly or send it uncompressed.',
    );
  }
  switch (e?.type) {
    case 'entity.parse.failed':
      return new AppError(
        'invalid_json',
        'The request body is not valid JSON; send a JSON object with Content-Type: application/json.',
      );
    case 'entity.too.large':
      return new AppError(
        'payload_too_large',
        `The request body is larger than the ${e.limit} bytes allowed; send a smaller value.`,
        { limit_bytes: e.limit ?? null },
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError(
        'unsupported_media_type',
        'The body encoding or charset is not supported; send UTF-8 JSON (identity, gzip, deflate or br).',
      );
    case 'request.size.invalid':
      return new AppError(
        'invalid_input',
        'The request body is not as long as its Content-Length header says; send the exact length.',
      );
  }
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && e.expose) {
    return new AppError(
      'invalid_input',
      'The request could not be read (bad URL encoding or body); fix and resend.',
    );
  }
  return undefined;
}

/** Seconds a client is told to wait before retrying a request the store could not take. */
const UNAVAILABLE_RETRY_S = 5;

/** Any error raised while handling a request, as the AppError the client is told about. */
export function httpError(err: unknown): AppError {
  return fromExpressError(err) ?? toAppError(err);
}

export function sendError(res: Response, error: AppError): void {
  res.locals.errorCode = error.code; // for the request's metrics
  if (error.code === 'method_not_allowed' && typeof error.details.allow === 'string') {
    res.set('Allow', error.details.allow);
  }
  // The store out of reach (a database restarting): worth retrying shortly, as readiness says too.
  if (error.code === 'unavailable' && !res.get('Retry-After'))
    res.set('Retry-After', String(UNAVAILABLE_RETRY_S));
  // An error that says when to come back (an upstream's capacity, a pause) says it in the header too.
  const retryAfterS = error.details.retry_after_s;
  if (typeof retryAfterS === 'number' && !res.get('Retry-After'))
    res.set('Retry-After', String(Math.max(0, Math.ceil(retryAfterS))));
  res.status(httpStatusOf(error)).json(error.toBody());
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const error = httpError(err);
    if (error.code === 'internal') {
      requestLogger(res, logger).error(
        { err: error.cause ?? err, method: req.method, path: req.path },
        'request failed',
      );
    }
    sendError(res, error);
  };
}
