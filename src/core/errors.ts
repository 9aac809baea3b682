/**
 * The one error type of the service. The core throws only AppError; every face (REST, MCP) turns it
 * into the same JSON body `{error, code, ...details}`. The core knows codes and details only: the HTTP
 * status of each code is the HTTP face's (src/http/http-status.ts), the JSON-RPC codes the MCP face's.
 */

export type ErrorCode =
  | 'invalid_input'
  | 'invalid_json'
  | 'unauthorized'
  | 'insufficient_credits'
  | 'daily_limit_reached'
  | 'max_cost_exceeded'
  | 'forbidden'
  | 'quota_exceeded'
  | 'not_found'
  | 'not_cached'
  | 'method_not_allowed'
  | 'conflict'
  | 'version_conflict'
  | 'idempotency_in_progress'
  | 'idempotency_key_reused'
  | 'request_timeout'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'headers_too_large'
  | 'rate_limited'
  | 'upstream_failed'
  | 'upstream_timeout'
  | 'unavailable'
  | 'internal';

/** Extra fields that travel with an error body, e.g. `required_cents`, `credit_balance_cents`, `field`. */
export type ErrorDetails = Record<string, string | number | boolean | string[] | null>;

/** The JSON body every face sends for a failure. */
export interface ErrorBody extends ErrorDetails {
  error: string;
  code: ErrorCode;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  /**
   * @param message one sentence an agent can act on: what was wrong and what to do. It is shown to the
   *   caller, so it never holds a key, a stack or an internal detail.
   * @param cause kept for the logs only.
   */
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }

  toBody(): ErrorBody {
    return { error: this.message, code: this.code, ...this.details };
  }
}

const GENERIC_INTERNAL =
  'The service failed to handle this request; it changed nothing, so it is safe to retry.';

/** Any thrown value as an AppError; unknown failures become a generic `internal` error (log the cause). */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal', GENERIC_INTERNAL, {}, err);
}
