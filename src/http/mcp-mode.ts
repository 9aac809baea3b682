/**
 * What the two ways of serving /mcp share (sessions kept in this process, mcp-sessions.ts; stateless, one
 * server per request, mcp-stateless.ts): the interface the endpoint (mcp-endpoint.ts) drives, and the body of
 * a JSON-RPC error that /mcp answers itself.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Request, Response } from 'express';

/** A fresh McpServer over the service, not yet connected (one per transport: the SDK allows no more). */
export type NewMcpServer = () => McpServer;

export interface McpMode {
  /**
   * Answers a request to /mcp that passed the endpoint's checks (Host header, key headers); `agent` is the
   * account its key names, undefined without a valid key.
   */
  handle(req: Request, res: Response, agent: string | undefined): Promise<void>;
  /** Ends every long-lived GET event stream (at shutdown: they would hold the drain open). */
  closeStreams(): void;
  /** Closes every open transport. */
  close(): Promise<void>;
  /** The open sessions (none when stateless). */
  sessionCount(): number;
}

/** A JSON-RPC error answered by the endpoint itself, before or instead of an MCP server: `id` is null. */
export function rpcError(res: Response, status: number, code: number, message: string, data?: unknown): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null });
}
