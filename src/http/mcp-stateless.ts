/**
 * /mcp without sessions, for servers that share their store (PostgreSQL): several instances behind a load
 * balancer, none of which knows another's sessions. Every POST gets a transport and an McpServer of its own
 * (the SDK's stateless mode, `sessionIdGenerator: undefined`), closed when its response ends, so any instance
 * can answer any request and no sticky sessions are needed. Little is lost: every request carries its key and
 * no tool notifies after its answer; a `logging/setLevel` holds for its own request only, and no session has
 * an owner to check. GET (a notification stream) and DELETE (ending a session) have nothing to act on: 405.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { JSON_RPC } from '../mcp/json-rpc-codes.js';
import { MCP_PATH } from '../server-paths.js';
import { InFlightList } from './in-flight-list.js';
import { type McpMode, type NewMcpServer, rpcError } from './mcp-mode.js';

const NO_SESSIONS =
  'this server keeps no MCP sessions (it may be one of several instances sharing a database), so there is ' +
  'no event stream to open and no session to end; send each JSON-RPC message as a POST, with your key.';

export function statelessMcp(newServer: NewMcpServer): McpMode {
  /** The servers of requests being answered, closed with their response (or at close, if still open). */
  const open = new InFlightList<McpServer>();
  const closeServer = (server: McpServer, slot: number) => {
    open.remove(slot, server);
    void server.close().catch(() => undefined);
  };
  return {
    handle: async (req, res) => {
      if (req.method !== 'POST') {
        res.set('Allow', 'POST');
        const why = req.method === 'GET' || req.method === 'DELETE' ? `: ${NO_SESSIONS}` : '; use POST.';
        rpcError(res, 405, JSON_RPC.transportRefused, `${req.method} is not allowed on ${MCP_PATH}${why}`);
        return;
      }
      const server = newServer();
      const slot = open.add(server);
      res.on('close', () => closeServer(server, slot));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
    sessionCount: () => 0,
    // No GET streams; a POST's own event stream ends with its answer.
    closeStreams: () => undefined,
    close: async () => {
      for (const server of open.items()) void server.close().catch(() => undefined);
    },
  };
}
