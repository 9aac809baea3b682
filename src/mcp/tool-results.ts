/**
 * How outcomes become MCP tool results: success carries the REST response body as structuredContent and
 * as JSON text; failure is an isError result whose text is the same `{error, code, ...}` body REST sends,
 * so the model can read it and act. Unknown failures are logged and shown as a generic sentence.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { KEY_MISSING, KEY_UNKNOWN } from '../core/accounts.js';
import { AppError, toAppError } from '../core/errors.js';
import { PRICES } from '../core/pricing.js';
import type { Logger } from '../logger.js';
import { type McpExtra, requestIdOf } from './mcp-extra.js';

export const MCP_HOW_TO_AUTHENTICATE =
  `Register with POST /api/ac/register {"email": "..."} to get a key (${PRICES.starterCredit} cents of starter credit), then pass ` +
  'it as the X-API-Key or Authorization: Bearer header of the MCP HTTP connection, or as AC_API_KEY in the ' +
  'environment of the stdio server (without AC_API_KEY, the stdio server uses a local agent of its own).';

/** `replayed`: the stored response of an earlier call with the same idempotency key. */
export function toolSuccess(body: Record<string, unknown>, replayed = false): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(body) }],
    structuredContent: body,
    ...(replayed ? { _meta: { idempotent_replayed: true } } : {}),
  };
}

/** The AppError for a failure, with the MCP way to authenticate in a 401. */
/** `extra`: the handler's; over HTTP its authInfo carries the request id, which the log line then names. */
export function mcpError(err: unknown, logger: Logger, context: string, extra?: McpExtra): AppError {
  const error = toAppError(err);
  if (error.code === 'internal') {
    const reqId = requestIdOf(extra);
    logger.error({ err: error.cause ?? err, context, ...(reqId ? { reqId } : {}) }, 'MCP request failed');
  }
  if (error.code === 'unauthorized') {
    const what = error.details.reason === 'missing_key' ? KEY_MISSING : KEY_UNKNOWN;
    return new AppError('unauthorized', `${what} ${MCP_HOW_TO_AUTHENTICATE}`, error.details);
  }
  return error;
}

export function toolFailure(error: AppError): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(error.toBody()) }] };
}
