/**
 * /mcp with sessions kept in this process, for a server that holds its store alone (the JSON file store):
 * each initialize gets a transport and an McpServer of its own, found again by `Mcp-Session-Id`. A session
 * belongs to the first agent whose key used it; another agent's key on it gets 403. A session unused for
 * `idleMs` is closed (one no agent has used yet after a minute), and at most `maxSessions` are open at once,
 * so abandoned or scripted clients cannot hold memory without bound.
 */
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Request, Response } from 'express';
import { JSON_RPC } from '../mcp/json-rpc-codes.js';
import { MCP_PATH } from '../server-paths.js';
import { type McpMode, type NewMcpServer, rpcError } from './mcp-mode.js';

interface Session {
  transport: StreamableHTTPServerTransport;
  /** The agent that owns the session, once a valid key has used it. */
  owner: string | undefined;
  lastSeen: number;
}

export interface McpSessionOptions {
  /** Close a session unused for this long. */
  idleMs: number;
  /** At most this many open sessions (default 1000). */
  maxSessions?: number | undefined;
}

/** A session that no agent has used yet is closed after at most this long unused. */
const UNOWNED_IDLE_MS = 60_000;

export function mcpSessions(newServer: NewMcpServer, options: McpSessionOptions): McpMode {
  const { idleMs } = options;
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

  /** Finds the request's session and checks its owner; answers and returns undefined when it cannot go on. */
  function sessionFor(req: Request, res: Response, agent: string | undefined): Session | undefined {
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

  /** A POST without Mcp-Session-Id: must be an initialize, which opens a session if there is room. */
  async function open(req: Request, res: Response, owner: string | undefined): Promise<void> {
    if (!isInitializeRequest(req.body)) {
      rpcError(
        res,
        400,
        JSON_RPC.transportRefused,
        'No session: send an initialize request first (without Mcp-Session-Id).',
      );
      return;
    }
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
    await newServer().connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  return {
    handle: async (req, res, agent) => {
      if (req.method === 'POST' && req.header('mcp-session-id') === undefined) return open(req, res, agent);
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
      const session = sessionFor(req, res, agent);
      if (session) await session.transport.handleRequest(req, res, req.body);
    },
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
