/**
 * Opaque cursors of the simple lists (the ledger, the operator's accounts): base64url of a small JSON
 * object that only this service reads. A cursor that is not one of ours is a 400 on field `cursor`.
 */
import { Buffer } from 'node:buffer';
import { AppError } from './errors.js';

export function writeCursor(body: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

/** The cursor's body, when `read` accepts it (returns undefined for a body of the wrong shape). */
export function readCursor<T>(cursor: string, read: (body: Record<string, unknown>) => T | undefined): T {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    body = undefined;
  }
  const value = body && typeof body === 'object' ? read(body as Record<string, unknown>) : undefined;
  if (value === undefined) {
    throw new AppError(
      'invalid_input',
      'cursor is not one this list gave: pass next_cursor from the previous answer as it is, or start ' +
        'again without a cursor.',
      { field: 'cursor' },
    );
  }
  return value;
}
