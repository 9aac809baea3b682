/**
 * What the stdio bridge (mcp-bridge.ts) answers in the server's place: when the server is gone, when an
 * exchange failed while the server stayed, and when the server refused a message at the HTTP level (a 429, a
 * 503). A tool
 * call gets an isError result whose text is the REST error body, as on the direct path, so that the model
 * reads it; any other request gets a JSON-RPC error carrying the same body.
 */
import {
  type JSONRPCMessage,
  type JSONRPCRequest,
  PROTOCOL_VERSION_META_KEY,
  type SdkHttpError,
} from '@modelcontextprotocol/client';
import { AppError, type ErrorBody } from '../core/errors.js';
import { JSON_RPC } from './json-rpc-codes.js';

export function serverGoneMessage(server: string, dataDir: string, why: string, inFlight: boolean): string {
  const outcome = inFlight
    ? 'This call may or may not have been done; check before repeating it.'
    : 'This call was not done.';
  return (
    `The agent-context server at ${server}, which this MCP connection went through, has stopped (${why}). ` +
    `${outcome} Restart the agent-context MCP server in your client (or the client itself): it will open ` +
    `the store in ${dataDir} directly, or go through a server again if one runs.`
  );
}

/** The server is still there, but the exchange of this call failed before its answer was read. */
export function unansweredMessage(server: string): string {
  return (
    `The agent-context server at ${server} did not answer this call (the connection failed while it was ` +
    'sent or answered). This call may or may not have been done; check before repeating it.'
  );
}

/** Whether `request` speaks MCP 2026-07-28 (its `_meta` names the revision), whose results carry resultType. */
function isModern(request: JSONRPCRequest): boolean {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  return typeof meta?.[PROTOCOL_VERSION_META_KEY] === 'string';
}

/** The answer to `request` with `body` as its error: an isError result for a tool call. */
export function errorAnswer(
  request: JSONRPCRequest,
  body: ErrorBody,
  rpcCode: number = JSON_RPC.relayFailed,
): JSONRPCMessage {
  if (request.method === 'tools/call') {
    const result = { isError: true, content: [textOf(body)] };
    return {
      jsonrpc: '2.0',
      id: request.id,
      result: isModern(request) ? { ...result, resultType: 'complete' } : result,
    };
  }
  return { jsonrpc: '2.0', id: request.id, error: { code: rpcCode, message: body.error, data: body } };
}

export function unavailableAnswer(request: JSONRPCRequest, message: string): JSONRPCMessage {
  return errorAnswer(request, new AppError('unavailable', message).toBody());
}

/** The answer to a request the server refused at the HTTP level (its body is a JSON-RPC error). */
export function refusedAnswer(request: JSONRPCRequest, err: SdkHttpError): JSONRPCMessage {
  const relayed = relayedError(err);
  const body = restBody(relayed?.data);
  if (body) return errorAnswer(request, body, relayed?.code);
  return {
    jsonrpc: '2.0',
    id: request.id,
    error: relayed ?? { code: JSON_RPC.relayFailed, message: err.message },
  };
}

function textOf(body: ErrorBody): { type: 'text'; text: string } {
  return { type: 'text', text: JSON.stringify(body) };
}

/** The REST error body the server put in a JSON-RPC error's data, when it did. */
function restBody(data: unknown): ErrorBody | undefined {
  const body = data as Partial<ErrorBody> | undefined;
  return typeof body?.error === 'string' && typeof body.code === 'string' ? (body as ErrorBody) : undefined;
}

/** The JSON-RPC error the server sent with an HTTP error status (the SDK keeps the body as `data.text`). */
function relayedError(err: SdkHttpError): { code: number; message: string; data?: unknown } | undefined {
  const text = err.data.text;
  if (typeof text !== 'string') return undefined;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (typeof body.error?.code === 'number' && typeof body.error.message === 'string') {
      return {
        code: body.error.code,
        message: body.error.message,
        ...(body.error.data === undefined ? {} : { data: body.error.data }),
      };
    }
  } catch {
    // not JSON: the caller words it
  }
  return undefined;
}
