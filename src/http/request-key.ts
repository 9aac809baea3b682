/** Reads the API key from `X-API-Key` or `Authorization: Bearer`, the two ways the spec accepts. */
import type { Request } from 'express';
import { AppError } from '../core/errors.js';

export function bearerToken(req: Request): string | undefined {
  const header = req.get('authorization');
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/iu.exec(header);
  return match?.[1];
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
