/**
 * The HTTP status of each error code: the one map, owned by the HTTP face (the core's errors carry codes and
 * details only). A `Record` over every code, so a new code without a status is a compile error.
 */
import type { AppError, ErrorCode } from '../core/errors.js';

export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_input: 400,
  invalid_json: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  daily_limit_reached: 402,
  max_cost_exceeded: 402,
  forbidden: 403,
  quota_exceeded: 403,
  not_found: 404,
  not_cached: 404,
  method_not_allowed: 405,
  conflict: 409,
  version_conflict: 412,
  idempotency_in_progress: 409,
  idempotency_key_reused: 422,
  request_timeout: 408,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  upstream_failed: 502,
  upstream_timeout: 504,
  unavailable: 503,
  internal: 500,
};

export function httpStatusOf(error: AppError): number {
  return HTTP_STATUS[error.code];
}
