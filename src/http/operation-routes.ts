/**
 * The REST face of the operation table: one Express route per operation. Each route authenticates as its
 * entry says, checks the `agent_key` field against the header key, validates the input with the entry's
 * schema and runs it. Express 5 forwards rejected promises to the error handler, so there is no try/catch.
 */
import { Buffer } from 'node:buffer';
import { timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { hashKey } from '../core/accounts.js';
import type { Core } from '../core/core.js';
import { AppError } from '../core/errors.js';
import { parseIdempotencyKey } from '../core/idempotency.js';
import type { RestOperation } from '../core/operations.js';
import { runOperation } from '../core/run-operation.js';
import { fieldsOf, parseInput } from '../core/validation.js';
import { setEntityTag, withPreconditions } from './preconditions.js';
import { identify, requireAccount } from './request-identity.js';
import { bearerToken } from './request-key.js';
import type { RouteTable } from './route-table.js';

/** Whether `secret` hashes to `expectedHash` (hex), compared in constant time. */
function matchesHash(secret: string, expectedHash: string): boolean {
  return timingSafeEqual(Buffer.from(hashKey(secret), 'hex'), Buffer.from(expectedHash, 'hex'));
}

function requestFields(req: Request, op: RestOperation): Record<string, unknown> {
  const source: unknown = op.http.method === 'GET' ? req.query : (req.body ?? {});
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw new AppError(
      'invalid_input',
      'The request body must be a JSON object, like {"memory_key": "..."}.',
    );
  }
  return source as Record<string, unknown>;
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
  const token = bearerToken(req);
  if (token === undefined || !matchesHash(token, hashKey(adminToken))) {
    throw new AppError('unauthorized', 'This operator route needs "Authorization: Bearer <AC_ADMIN_TOKEN>".');
  }
}

function routeHandler(core: Core, op: RestOperation, adminToken: string | undefined): RequestHandler {
  const allowed = op.agentKeyField === 'none' ? fieldsOf(op.input) : ['agent_key', ...fieldsOf(op.input)];
  return async (req, res) => {
    res.locals.operation = op.name;
    if (req.method === 'HEAD') {
      // Express routes HEAD to GET handlers; an operation (possibly paid) must not run for a bodiless answer.
      throw new AppError('method_not_allowed', `HEAD is not offered on ${op.http.path}; use GET.`, {
        allow: op.http.method,
      });
    }
    let fields = requestFields(req, op);
    let agentId: string | undefined;
    if (op.auth === 'agent') {
      const account = await requireAccount(req, core);
      agentId = account.id;
      res.locals.agentId = agentId;
      fields = takeAgentKey(op, fields, (await identify(req, core)).key as string);
    } else if (op.auth === 'admin') {
      checkAdmin(req, adminToken as string);
    }
    const input = parseInput(op.input, withPreconditions(req, op.http, fields), allowed);
    const idempotencyKey = op.idempotent
      ? parseIdempotencyKey(req.get('idempotency-key'), 'The Idempotency-Key header')
      : undefined;
    const outcome = await runOperation(core, op, agentId, input, idempotencyKey);
    if (outcome.replayed) res.setHeader('Idempotent-Replayed', 'true');
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
): void {
  for (const op of operations) {
    if (op.auth === 'admin' && adminToken === undefined) continue; // the operator route exists only when configured
    routes.add(op.http.method, op.http.path, routeHandler(core, op, adminToken));
  }
}
