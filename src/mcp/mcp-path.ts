/** Where `agent-context serve` mounts MCP over Streamable HTTP; the stdio bridge connects there. */
export const MCP_PATH = '/mcp';
