/**
 * The REST face of the operation table: one Express route per operation. Each route authenticates as its
 * entry says, checks the `agent_key` field against the header key, validates the input with the entry's
 * schema and runs it. Express 5 forwards rejected promises to the error handler, so there is no try/catch.
 */
import { Buffer } from 'node:buffer';
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Core } from '../core/core.js';
import { AppError } from '../core/errors.js';
import { parseIdempotencyKey } from '../core/idempotency.js';
import type { RestOperation } from '../core/operation-table.js';
import { runOperation } from '../core/run-operation.js';
import { fieldsOf, parseInput } from '../core/validation.js';
import { isPlainJson, NDJSON_TYPES } from './json-body.js';
import { setEntityTag, withPreconditions } from './preconditions.js';
import { identify, requireAccount } from './request-identity.js';
import { bearerMatches } from './request-key.js';
import type { RouteTable } from './route-table.js';

/**
 * The fields of an NDJSON route: the query string's, and the body's text as `ndjson`. Read only once the
 * caller is authenticated, since the body may be large.
 */
async function ndjsonFields(req: Request, res: Response, core: Core): Promise<Record<string, unknown>> {
  if (hasBody(req) && req.is(NDJSON_TYPES) === false) {
    throw new AppError(
      'unsupported_media_type',
      `The body must be NDJSON, one JSON object per line: send it with Content-Type: application/x-ndjson (got ${req.get('content-type') ?? 'none'}).`,
    );
  }
  const text = hasBody(req) ? await readText(req, res, core.limits.importMaxBytes) : '';
  return { ...(req.query as Record<string, unknown>), ndjson: text };
}

function requestFields(req: Request, op: RestOperation): Record<string, unknown> {
  // Plain JSON (the common case, already read by jsonBody) is known not to be NDJSON without parsing the type.
  if (hasBody(req) && !isPlainJson(req.headers) && req.is(NDJSON_TYPES) !== false) {
    throw new AppError(
      'unsupported_media_type',
      'The body must be JSON: send it with Content-Type: application/json (NDJSON is taken by memory_import only).',
    );
  }
  const source: unknown = op.http.method === 'GET' ? req.query : (req.body ?? {});
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw new AppError(
      'invalid_input',
      'The request body must be a JSON object, like {"memory_key": "..."}.',
    );
  }
  return source as Record<string, unknown>;
}

function hasBody(req: Request): boolean {
  return (
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0')
  );
}

/** The body as UTF-8 text, read by express.text (its size and encoding errors answered as for JSON bodies). */
function readText(req: Request, res: Response, limit: number): Promise<string> {
  const parse = express.text({ type: NDJSON_TYPES, limit, defaultCharset: 'utf-8' });
  return new Promise((resolve, reject) => {
    parse(req, res, (err?: unknown) =>
      err ? reject(err) : resolve(typeof req.body === 'string' ? req.body : ''),
    );
  });
}

/**
 * Streams an operation's NDJSON lines. The first line is awaited before the status is sent, so that a
 * failure at the start is still a JSON error; a failure later cuts the connection, so the client sees a
 * truncated stream and never a complete-looking one. Lines are written in chunks, waiting for the socket
 * to drain, and the reading stops when the client goes away.
 */
async function sendNdjson(res: Response, lines: AsyncIterable<unknown>): Promise<void> {
  const iterator = lines[Symbol.asyncIterator]();
  let next = await iterator.next();
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  try {
    let chunk = '';
    while (!next.done) {
      chunk += `${JSON.stringify(next.value)}\n`;
      if (chunk.length >= 64 * 1024) {
        const flushed = res.write(chunk);
        chunk = '';
        if (!flushed) await drained(res);
        if (res.destroyed) {
          await iterator.return?.();
          return;
        }
      }
      next = await iterator.next();
    }
    res.end(chunk);
  } catch (err) {
    res.destroy(err as Error);
  }
}

function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Removes `agent_key` from the fields and checks it against the header key as the operation requires.
 * The header key is already authenticated, so a plain comparison suffices: both strings come from the
 * caller, so comparing them reveals nothing it does not know, and no other string hashes the same.
 */
function takeAgentKey(
  op: RestOperation,
  fields: Record<string, unknown>,
  headerKey: string,
): Record<string, unknown> {
  const { agent_key: agentKey, ...rest } = fields;
  if (agentKey === undefined) {
    if (op.agentKeyField !== 'required') return rest;
    throw new AppError(
      'invalid_input',
      `agent_key is required${op.http.method === 'GET' ? ' as a query parameter' : ' in the body'}: ` +
        'repeat the API key you send in the header.',
      { field: 'agent_key' },
    );
  }
  if (typeof agentKey !== 'string') {
    throw new AppError('invalid_input', 'agent_key must be a string: the API key.', { field: 'agent_key' });
  }
  if (agentKey !== headerKey) {
    throw new AppError(
      'forbidden',
      'agent_key does not match the API key in the header; send the same key in both places.',
      { field: 'agent_key' },
    );
  }
  return rest;
}

function checkAdmin(req: Request, adminToken: string): void {
  if (!bearerMatches(req, adminToken)) {
    throw new AppError('unauthorized', 'This operator route needs "Authorization: Bearer <AC_ADMIN_TOKEN>".');
  }
}

/**
 * Ends what an account's key allowed others to do (the OAuth grants it signed in for): called before the key
 * is rotated, so that a leaked key's grants end with it. A failure stops the rotation (nothing rotated).
 */
export type BeforeKeyRotation = (agentId: string) => Promise<void>;

function routeHandler(
  core: Core,
  op: RestOperation,
  adminToken: string | undefined,
  beforeKeyRotation: BeforeKeyRotation | undefined,
): RequestHandler {
  const allowed = op.agentKeyField === 'none' ? fieldsOf(op.input) : ['agent_key', ...fieldsOf(op.input)];
  return async (req, res) => {
    res.locals.operation = op.name;
    if (req.method === 'HEAD') {
      // Express routes HEAD to GET handlers; an operation (possibly paid) must not run for a bodiless answer.
      throw new AppError('method_not_allowed', `HEAD is not offered on ${op.http.path}; use GET.`, {
        allow: op.http.method,
      });
    }
    let fields = op.http.ndjsonBody ? undefined : requestFields(req, op);
    let agentId: string | undefined;
    if (op.auth === 'agent') {
      const account = await requireAccount(req, core);
      agentId = account.id;
      res.locals.agentId = agentId;
      fields ??= await ndjsonFields(req, res, core);
      fields = takeAgentKey(op, fields, (await identify(req, core)).key as string);
    } else if (op.auth === 'admin') {
      checkAdmin(req, adminToken as string);
    }
    fields ??= await ndjsonFields(req, res, core);
    const input = parseInput(op.input, withPreconditions(req, op.http, fields), allowed);
    const idempotencyKey = op.idempotent
      ? parseIdempotencyKey(req.get('idempotency-key'), 'The Idempotency-Key header')
      : undefined;
    if (op.name === 'account_rotate_key' && agentId !== undefined) await beforeKeyRotation?.(agentId);
    const outcome = await runOperation(core, op, agentId, input, idempotencyKey);
    if (op.http.ndjsonAnswer) return sendNdjson(res, outcome.body as unknown as AsyncIterable<unknown>);
    if (outcome.replayed) res.setHeader('Idempotent-Replayed', 'true');
    else if (typeof outcome.body.cost_cents === 'number') res.locals.costCents = outcome.body.cost_cents;
    if (outcome.status === 200) setEntityTag(res, op.http, outcome.body);
    sendJson(res, outcome.status, outcome.body);
  };
}

/**
 * Sends `body` as JSON, as `res.status(status).json(body)` would here (no ETag, no JSONP, no spacing),
 * without the content-type parsing and freshness checks of Express's `res.send`.
 */
function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body) ?? '';
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export function notFoundRoute(req: Request): AppError {
  return new AppError(
    'not_found',
    `There is no route ${req.method} ${req.path}; the API is described at /api/ac/openapi.json and /api/ac/llms.txt.`,
  );
}

export function addOperationRoutes(
  routes: RouteTable,
  core: Core,
  operations: readonly RestOperation[],
  adminToken: string | undefined,
  beforeKeyRotation?: BeforeKeyRotation,
): void {
  for (const op of operations) {
    if (op.auth === 'admin' && adminToken === undefined) continue; // the operator route exists only when configured
    routes.add(op.http.method, op.http.path, routeHandler(core, op, adminToken, beforeKeyRotation));
  }
}
