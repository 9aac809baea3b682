/**
 * Reads the API key from `X-API-Key` or `Authorization: Bearer`, the two ways the spec accepts, and checks
 * an operator's bearer token (AC_ADMIN_TOKEN, AC_METRICS_TOKEN).
 */
import { Buffer } from 'node:buffer';
import { timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { hashKey } from '../core/accounts.js';
import { AppError } from '../core/errors.js';

export function bearerToken(req: Request): string | undefined {
  const header = req.get('authorization');
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/iu.exec(header);
  return match?.[1];
}

/** Whether the request's bearer token is `secret`, compared in constant time (of their hashes). */
export function bearerMatches(req: Request, secret: string): boolean {
  const token = bearerToken(req);
  if (token === undefined) return false;
  return timingSafeEqual(Buffer.from(hashKey(token), 'hex'), Buffer.from(hashKey(secret), 'hex'));
}

/** The key sent with the request, or undefined; `invalid_input` when the two headers disagree. */
export function requestKey(req: Request): string | undefined {
  const fromHeader = req.get('x-api-key')?.trim() || undefined;
  const fromBearer = bearerToken(req);
  if (fromHeader !== undefined && fromBearer !== undefined && fromHeader !== fromBearer) {
    throw new AppError(
      'invalid_input',
      'X-API-Key and Authorization: Bearer carry different keys; send the key in one of them.',
      { field: 'X-API-Key' },
    );
  }
  return fromHeader ?? fromBearer;
}
