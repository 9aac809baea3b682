/** What the SDK hands every MCP request handler: the request's own data, its envelope, the caller's auth info. */
import type { ServerContext } from '@modelcontextprotocol/server';

export type McpExtra = ServerContext;

/** The request id the HTTP edge put in the auth info, for log lines. */
export function requestIdOf(extra: McpExtra | undefined): string | undefined {
  const reqId = extra?.http?.authInfo?.extra?.requestId;
  return typeof reqId === 'string' ? reqId : undefined;
}
