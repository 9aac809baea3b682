/**
 * Paths of `agent-context serve` that another process on the host relies on: the MCP endpoint (mounted by
 * src/http/mcp-endpoint.ts, reached by the stdio bridge) and ping (served by src/http/discovery.ts, used by the
 * bridge to tell a live server from a gone one). Declared once here, for both sides.
 */
export const MCP_PATH = '/mcp';
export const PING_PATH = '/api/ac/ping';
