/** What the SDK hands every MCP request handler: the request's own data, its envelope, the caller's auth info. */
import type { ServerContext } from '@modelcontextprotocol/server';

export type McpExtra = ServerContext;

/** The request id the HTTP edge put in the auth info, for log lines. */
export function requestIdOf(extra: McpExtra | undefined): string | undefined {
  const reqId = extra?.http?.authInfo?.extra?.requestId;
  return typeof reqId === 'string' ? reqId : undefined;
}

/** The protocol era a server answers in: `legacy` for 2024-11-05 … 2025-11-25, `modern` for 2026-07-28. */
export type McpEra = 'legacy' | 'modern';

/** The request's 2026-07-28 envelope (its reserved `_meta` keys, as the SDK lifted them), if it has one. */
export function envelopeOf(extra: McpExtra): Record<string, unknown> | undefined {
  return extra.mcpReq.envelope as Record<string, unknown> | undefined;
}
