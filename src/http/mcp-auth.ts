/**
 * What /mcp asks of a request when OAuth is on (MCP authorization; RFC 6750 and RFC 9728): a request with
 * no credential, or one that is unknown, expired, revoked or for another resource, is answered 401 with a
 * `WWW-Authenticate: Bearer` challenge naming the protected resource metadata and the scopes, so an OAuth
 * client can start; a token whose scopes do not cover the tool it calls is answered 403
 * `insufficient_scope` (a tool that changes memories needs `write`; everything else `read` or `write`).
 * An API key is never challenged: a client that sends one goes on as before.
 */
import type { Operation } from '../core/operation-table.js';
import { READ_SCOPE, RESOURCE_SCOPES, WRITE_SCOPE } from '../oauth/oauth-settings.js';

const ALL_SCOPES = RESOURCE_SCOPES.join(' ');

export interface McpAuthOptions {
  /** The URL of /mcp's protected resource metadata. */
  resourceMetadataUrl: string;
}

function quoted(value: string): string {
  return `"${value.replace(/["\\]/gu, '\\$&')}"`;
}

export function challenge(
  options: McpAuthOptions,
  error?: { code: 'invalid_token' | 'insufficient_scope'; description: string },
): string {
  const parts = [
    `resource_metadata=${quoted(options.resourceMetadataUrl)}`,
    `scope=${quoted(ALL_SCOPES)}`,
    ...(error ? [`error=${quoted(error.code)}`, `error_description=${quoted(error.description)}`] : []),
  ];
  return `Bearer ${parts.join(', ')}`;
}

/** Tool name → the scope it needs, from the operation table's hints. */
export function toolScopes(operations: readonly Operation[]): Map<string, string> {
  const scopes = new Map<string, string>();
  for (const op of operations) {
    if (op.mcp) scopes.set(op.mcp.tool, op.mcp.hints.readOnlyHint === false ? WRITE_SCOPE : READ_SCOPE);
  }
  return scopes;
}

/**
 * The scope a JSON-RPC message needs: `write` for a tool that changes memories, else `read`; a batch (an
 * array, which the 2025-03-26 era accepts) needs what the neediest of its messages needs.
 */
export function scopeNeeded(body: unknown, scopes: ReadonlyMap<string, string>): string {
  if (Array.isArray(body))
    return body.some((one) => scopeNeeded(one, scopes) === WRITE_SCOPE) ? WRITE_SCOPE : READ_SCOPE;
  const message = body as { method?: unknown; params?: { name?: unknown } } | undefined;
  if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') return READ_SCOPE;
  return scopes.get(message.params.name) ?? READ_SCOPE;
}

/** Whether granted scopes cover `needed` (`write` covers reading too). */
export function covers(granted: readonly string[], needed: string): boolean {
  return granted.includes(needed) || (needed === READ_SCOPE && granted.includes(WRITE_SCOPE));
}
