/**
 * The JSON-RPC error codes the MCP face answers with itself, in one place (the HTTP statuses are the HTTP
 * face's, src/http/http-status.ts; the protocol's own, such as an unsupported version, a header that
 * contradicts the body or an unknown method, the SDK answers). Tool failures are not among them: a tool
 * answers an isError result.
 */
import type { AppError } from '../core/errors.js';

export const JSON_RPC = Object.freeze({
  /** The body is not JSON. */
  parseError: -32700,
  /** Not a valid request: malformed, too large, or a header that contradicts itself. */
  invalidRequest: -32600,
  internalError: -32603,
  /** The transport refused: shutting down (the SDK uses it too, for a method the endpoint does not take). */
  transportRefused: -32000,
  /** A resource read failed; `data` is the REST error body. */
  resourceFailed: -32001,
  /** A resource that does not exist, on the 2026-07-28 revision (Invalid Params); `data` is the REST body. */
  resourceNotFound: -32602,
  /** The stdio bridge answered in the server's place (it is gone, or refused); `data` is the REST body. */
  relayFailed: -32002,
});

/** The code of a request the transport refused before any method ran, for the error that refused it. */
export function jsonRpcCodeOf(error: AppError): number {
  if (error.code === 'invalid_json') return JSON_RPC.parseError;
  if (error.code === 'internal') return JSON_RPC.internalError;
  return JSON_RPC.invalidRequest;
}
