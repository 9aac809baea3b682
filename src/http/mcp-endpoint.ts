/**
 * MCP over Streamable HTTP at /mcp, on the same Express app (and so the same core and ledger) as REST.
 * Stateful sessions: each initialize gets a transport and an McpServer of its own. The key comes from
 * X-API-Key or Authorization: Bearer exactly as for REST; discovery works without one. A session belongs
 * to the first agent whose key used it; another agent's key on it gets 403. Host-header (DNS-rebinding)
 * protection applies when the server is bound to a loopback address. A session unused for `idleMs` is
 * closed (one no agent has used yet after a minute), and at most `maxSessions` are open at once, so
 * abandoned or scripted clients cannot hold memory without bound.
 */
import { randomUUID } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorRequestHandler, Express, Request, Response } from 'express';
import { createMcpServer, type McpServerDeps } from '../mcp/create-mcp-server.js';
import { JSON_RPC, jsonRpcCodeOf } from '../mcp/json-rpc-codes.js';
import { MCP_PATH } from '../server-paths.js';
import { httpError } from './error-handler.js';
import { httpStatusOf } from './http-status.js';
import { identify } from './request-identity.js';
import { requestLogger } from './request-log.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

interface Session {
  transport: StreamableHTTPServerTransport;
  /** The agent that owns the session, once a valid key has used it. */
  owner: string | undefined;
  lastSeen: number;
}

function rpcError(res: Response, status: number, code: number, message: string, data?: unknown): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null });
}

export interface McpHttp {
  /** Closes every open session. */
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
  /** Close a session unused for this long. */
  idleMs: number;
  /** At most this many open sessions (default 1000). */
  maxSessions?: number;
}

/** A session that no agent has used yet is closed after at most this long unused. */
const UNOWNED_IDLE_MS = 60_000;

export function mountMcpHttp(
  app: Express,
  deps: Omit<McpServerDeps, 'keyOf'>,
  options: McpHttpOptions,
): McpHttp {
  const { host, idleMs } = options;
  const maxSessions = options.maxSessions ?? 1000;
  const sessions = new Map<string, Session>();
  const idleLimit = (session: Session) => (session.owner ? idleMs : Math.min(idleMs, UNOWNED_IDLE_MS));
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const session of sessions.values()) {
        if (now - session.lastSeen > idleLimit(session)) void session.transport.close();
      }
    },
    Math.max(250, Math.min(idleMs / 2, 30_000)),
  );
  sweep.unref();
  if (LOOPBACK.has(host)) {
    const allowed = ['127.0.0.1', 'localhost', '[::1]'];
    if (options.publicUrl) allowed.push(new URL(options.publicUrl).hostname);
    app.use(MCP_PATH, hostHeaderValidation(allowed));
  }

  /** Makes room for a new session: the least recently used one that no agent owns goes; else none can. */
  function makeRoom(): boolean {
    if (sessions.size < maxSessions) return true;
    let oldest: Session | undefined;
    for (const session of sessions.values()) {
      if (!session.owner && (!oldest || session.lastSeen < oldest.lastSeen)) oldest = session;
    }
    if (!oldest) return false;
    void oldest.transport.close();
    if (oldest.transport.sessionId) sessions.delete(oldest.transport.sessionId);
    return true;
  }

  /** The agent behind the request's key (looked up once per request), undefined without a valid key. */
  async function agentOf(req: Request): Promise<string | undefined> {
    return (await identify(req, deps.core)).account?.id;
  }

  /** Finds the request's session and checks its owner; answers and returns undefined when it cannot go on. */
  async function sessionFor(req: Request, res: Response): Promise<Session | undefined> {
    const id = req.header('mcp-session-id');
    const session = id ? sessions.get(id) : undefined;
    if (!session) {
      rpcError(
        res,
        id ? 404 : 400,
        JSON_RPC.transportRefused,
        id ? 'Unknown or expired session: initialize again.' : 'Missing Mcp-Session-Id header.',
      );
      return undefined;
    }
    const agent = await agentOf(req);
    if (session.owner !== undefined && agent !== session.owner) {
      const why =
        agent === undefined ? "send its owner's API key with every request" : 'it belongs to another agent';
      rpcError(
        res,
        403,
        JSON_RPC.sessionForbidden,
        `This session cannot be used without its key: ${why}; or initialize your own.`,
      );
      return undefined;
    }
    if (agent !== undefined) session.owner ??= agent;
    session.lastSeen = Date.now();
    return session;
  }

  const keyOf: McpServerDeps['keyOf'] = (extra) => extra.authInfo?.token;
  // The account was found at the edge (identify): a tool call does not look the key up again.
  const knownAgent: McpServerDeps['knownAgent'] = (extra) => {
    const agentId = extra.authInfo?.extra?.agentId;
    return typeof agentId === 'string' ? agentId : undefined;
  };

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
    if (req.method === 'POST' && req.header('mcp-session-id') === undefined) {
      if (!isInitializeRequest(req.body)) {
        rpcError(
          res,
          400,
          JSON_RPC.transportRefused,
          'No session: send an initialize request first (without Mcp-Session-Id).',
        );
        return;
      }
      const owner = await agentOf(req);
      if (!makeRoom()) {
        rpcError(
          res,
          503,
          JSON_RPC.transportRefused,
          'Too many open MCP sessions; close unused ones (DELETE /mcp) and try again.',
        );
        return;
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { transport, owner, lastSeen: Date.now() });
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await createMcpServer({ ...deps, keyOf, knownAgent }).connect(transport);
      await transport.handleRequest(req, res, req.body);
      return;
    }
    if (!['GET', 'POST', 'DELETE'].includes(req.method)) {
      res.set('Allow', 'GET, POST, DELETE');
      rpcError(
        res,
        405,
        JSON_RPC.transportRefused,
        `${req.method} is not allowed on ${MCP_PATH}; use POST, GET or DELETE.`,
      );
      return;
    }
    const session = await sessionFor(req, res);
    if (session) await session.transport.handleRequest(req, res, req.body);
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

  return {
    sessionCount: () => sessions.size,
    closeStreams: () => {
      for (const session of sessions.values()) session.transport.closeStandaloneSSEStream();
    },
    close: async () => {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => s.transport.close()));
      sessions.clear();
    },
  };
}
