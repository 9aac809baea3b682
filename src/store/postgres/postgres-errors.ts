/**
 * Which failures of the PostgreSQL store mean "the database is out of reach", and the 503 they become: the
 * service answers JSON, says whether anything was done, and serves again once the database is back.
 */
import type pg from 'pg';
import { AppError } from '../../core/errors.js';

/** Socket errors and SQLSTATEs that mean the database cannot be reached or dropped the connection. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown: the server is stopping, or the connection was terminated
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the server is starting
  '53300', // too_many_connections
]);

/** Whether `err` says the database is out of reach (rather than that the request was wrong). */
export function isUnreachable(err: unknown): boolean {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNREACHABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return (
    typeof message === 'string' &&
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/u.test(
      message,
    )
  );
}

/** The 503 for a database out of reach: `maybeDone` when it went away during a commit. */
export function unavailable(err: unknown, maybeDone = false): AppError {
  return new AppError(
    'unavailable',
    maybeDone
      ? 'The database went away while this change was being committed, so it may or may not have been made. ' +
          'Retry with the same Idempotency-Key to get its outcome, or read the data back before retrying.'
      : 'The database cannot be reached right now; nothing was done. Retry in a few seconds.',
    {},
    err,
  );
}

/** Runs one statement through `db`, a database out of reach turned into the `unavailable` error. */
export async function queryReachable<R extends pg.QueryResultRow>(
  db: Pick<pg.Pool, 'query'>,
  text: string,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  try {
    return await db.query<R>(text, values);
  } catch (err) {
    throw isUnreachable(err) ? unavailable(err) : err;
  }
}
