/**
 * MCP over Streamable HTTP at /mcp, on the same Express app (and so the same core and ledger) as REST. What
 * every request passes through is here: Host-header (DNS-rebinding) protection when the server is bound to a
 * loopback address; the key from X-API-Key or Authorization: Bearer, looked up once per request exactly as
 * for REST (discovery works without one); a body the JSON parser refused, answered as a JSON-RPC error. Then
 * one of two modes answers: sessions kept in this process (mcp-sessions.ts) when the server holds its store
 * alone, or stateless (mcp-stateless.ts) when several instances share one database, so that a load balancer
 * needs no sticky sessions.
 */
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import type { ErrorRequestHandler, Express, Request } from 'express';
import { createMcpServer, type McpServerDeps } from '../mcp/create-mcp-server.js';
import { JSON_RPC, jsonRpcCodeOf } from '../mcp/json-rpc-codes.js';
import { MCP_PATH } from '../server-paths.js';
import { httpError } from './error-handler.js';
import { httpStatusOf } from './http-status.js';
import { rpcError } from './mcp-mode.js';
import { mcpSessions } from './mcp-sessions.js';
import { statelessMcp } from './mcp-stateless.js';
import { identify } from './request-identity.js';
import { requestLogger } from './request-log.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export interface McpHttp {
  /** Closes every open session (stateless: every request's server still open). */
  close(): Promise<void>;
  /** Ends every session's standalone GET event stream (at shutdown: they would hold the drain open). */
  closeStreams(): void;
  sessionCount(): number;
}

export interface McpHttpOptions {
  /** The address the server listens on: loopback turns on Host-header checks. */
  host: string;
  /** The public base URL, whose host name is also allowed by the Host-header check. */
  publicUrl?: string | undefined;
  /**
   * No sessions: one transport and McpServer per POST, GET and DELETE answered 405. For a store that several
   * instances share, where the next request may reach another instance.
   */
  stateless: boolean;
  /** With sessions: close a session unused for this long. */
  idleMs: number;
  /** With sessions: at most this many open sessions (default 1000). */
  maxSessions?: number;
}

export function mountMcpHttp(
  app: Express,
  deps: Omit<McpServerDeps, 'keyOf'>,
  options: McpHttpOptions,
): McpHttp {
  if (LOOPBACK.has(options.host)) {
    const allowed = ['127.0.0.1', 'localhost', '[::1]'];
    if (options.publicUrl) allowed.push(new URL(options.publicUrl).hostname);
    app.use(MCP_PATH, hostHeaderValidation(allowed));
  }

  const keyOf: McpServerDeps['keyOf'] = (extra) => extra.authInfo?.token;
  // The account was found at the edge (identify): a tool call does not look the key up again.
  const knownAgent: McpServerDeps['knownAgent'] = (extra) => {
    const agentId = extra.authInfo?.extra?.agentId;
    return typeof agentId === 'string' ? agentId : undefined;
  };
  const newServer = () => createMcpServer({ ...deps, keyOf, knownAgent });
  const mode = options.stateless
    ? statelessMcp(newServer)
    : mcpSessions(newServer, { idleMs: options.idleMs, maxSessions: options.maxSessions });

  app.all(MCP_PATH, async (req, res) => {
    const { key, account, error } = await identify(req, deps.core);
    if (error?.code === 'invalid_input') {
      rpcError(res, 400, JSON_RPC.invalidRequest, error.message); // two headers with different keys
      return;
    }
    // The transport hands req.auth to every handler as extra.authInfo (with the request id, for logs).
    if (key !== undefined) {
      const extra = { requestId: res.locals.requestId as string | undefined, agentId: account?.id };
      (req as Request & { auth?: AuthInfo }).auth = {
        token: key,
        clientId: 'agent-context',
        scopes: [],
        extra,
      };
    }
    await mode.handle(req, res, account?.id);
  });

  // A body the JSON parser refused (malformed, too large, not JSON) is answered as a JSON-RPC error here,
  // with the same sentence REST gives, rather than as a REST error body.
  const answerAsJsonRpc: ErrorRequestHandler = (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const error = httpError(err);
    if (error.code === 'internal') {
      requestLogger(res, deps.logger).error(
        { err: error.cause ?? err, method: req.method, path: req.path },
        'MCP request failed',
      );
    }
    rpcError(res, httpStatusOf(error), jsonRpcCodeOf(error), error.message, error.toBody());
  };
  app.use(MCP_PATH, answerAsJsonRpc);

  return { sessionCount: mode.sessionCount, closeStreams: mode.closeStreams, close: mode.close };
}
