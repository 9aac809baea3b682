/**
 * Request bodies: a POST or DELETE that carries a body must carry JSON (415 otherwise), and JSON bodies are
 * parsed into `req.body` within the size limit.
 *
 * The common case (exactly `application/json`, optionally `; charset=utf-8`, no Content-Encoding, a
 * Content-Length within the limit) is read and parsed here, with body-parser's rules: strict (an object or
 * an array), an empty body is `{}`, a UTF-8 byte-order mark is dropped, and failures carry body-parser's
 * error types so that the one error handler words them. Everything else (compressed bodies, chunked
 * bodies, other JSON media types or charsets, oversized or empty bodies) goes through `express.json`
 * itself. The fast path exists because body-parser's content-type, charset and stream machinery was 6% of
 * a cached data request's CPU in the benchmark (BENCHMARKS.md).
 */
import type { IncomingHttpHeaders } from 'node:http';
import express, { type Request, type RequestHandler } from 'express';
import { AppError } from '../core/errors.js';

const JSON_TYPES = ['application/json', 'application/*+json'];
/** NDJSON bodies are left unread here, for the route that takes one (memory_import) to read. */
export const NDJSON_TYPES = ['application/x-ndjson', 'application/jsonl'];
const PLAIN_JSON = new Set([
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
]);
/** The first character that is not JSON whitespace, as body-parser's strict mode checks it. */
const FIRST_CHAR = /^[ \t\n\r]*([^ \t\n\r])/;

function hasBody(req: Request): boolean {
  return (
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0')
  );
}

/** An error shaped as body-parser's (http-errors) are, for the error handler's mapping. */
function bodyError(type: string, message: string): Error {
  return Object.assign(new Error(message), { type, status: 400, statusCode: 400, expose: true });
}

/** Whether the request says its body is plain JSON (`application/json`, optionally with `charset=utf-8`). */
export function isPlainJson(headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type'];
  return type !== undefined && PLAIN_JSON.has(type.toLowerCase());
}

/** The body's length when the fast path reads it (plain JSON, identity, 1..limit bytes), else undefined. */
export function readsDirectly(headers: IncomingHttpHeaders, limit: number): number | undefined {
  if (!isPlainJson(headers)) return undefined;
  if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined)
    return undefined;
  const raw = headers['content-length'];
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  const length = Number(raw);
  return length > 0 && length <= limit ? length : undefined;
}

/**
 * The text each parsed JSON body was parsed from, for the face that hands a body on as text (/mcp: the SDK's
 * handler reads it again, where serializing the parsed value would overflow the stack on a deeply nested one).
 */
const bodyTexts = new WeakMap<Request, string>();

/** The JSON text `req.body` was parsed from (without a byte-order mark), when it was. */
export function jsonTextOf(req: Request): string | undefined {
  return bodyTexts.get(req);
}

function parseStrict(req: Request, text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  bodyTexts.set(req, body);
  if (body.length === 0) return {}; // as body-parser: an empty body is an empty object
  const first = FIRST_CHAR.exec(body)?.[1];
  if (first !== '{' && first !== '[') {
    throw bodyError(
      'entity.parse.failed',
      `Unexpected token ${first ?? 'end of input'} in JSON at position 0`,
    );
  }
  try {
    return JSON.parse(body);
  } catch (err) {
    throw bodyError('entity.parse.failed', (err as Error).message);
  }
}

export function jsonBody(limit: number): RequestHandler {
  const fallback = express.json({
    limit,
    strict: true,
    type: JSON_TYPES,
    verify: (req, _res, bytes) => {
      bodyTexts.set(req as Request, bytes.toString('utf8').replace(/^\uFEFF/u, ''));
    },
  });
  return (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD' || !hasBody(req)) return fallback(req, res, next);
    const length = readsDirectly(req.headers, limit);
    // A request whose client left while an earlier middleware waited emits nothing more: express.json
    // knows how to answer it.
    if (length === undefined || req.destroyed || req.readableEnded) {
      if (req.is(NDJSON_TYPES)) return next();
      if (!req.is(JSON_TYPES)) {
        throw new AppError(
          'unsupported_media_type',
          `The body must be JSON: send it with Content-Type: application/json (got ${req.get('content-type') ?? 'none'}).`,
        );
      }
      return fallback(req, res, next);
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const done = (err?: unknown) => {
      if (settled) return;
      settled = true;
      next(err);
    };
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (received !== length) {
        return done(bodyError('request.size.invalid', 'request size did not match content length'));
      }
      try {
        const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received);
        req.body = parseStrict(req, bytes.toString('utf8'));
      } catch (err) {
        return done(err);
      }
      done();
    });
    // A client that goes away: Node emits 'error' (ECONNRESET, "aborted") to a listener.
    req.on('error', (err: Error) => done(bodyError('request.aborted', err.message)));
  };
}
