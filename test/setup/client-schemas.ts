/**
 * Each client's documented configuration shape as a zod schema, written from the client's documentation
 * (not from src/setup), so the setup command's output and written files are checked against the docs.
 */
import { z } from 'zod';

const Env = z.record(z.string(), z.string());

/**
 * Claude Desktop: modelcontextprotocol.io, "Connect to local MCP servers"
 * (modelcontextprotocol/modelcontextprotocol docs/docs/develop/connect-local-servers.mdx):
 * `{"mcpServers": {"<name>": {"command": "...", "args": [...], "env": {...}}}}`.
 */
export const ClaudeDesktopConfig = z.looseObject({
  mcpServers: z.record(
    z.string(),
    z.strictObject({ command: z.string().min(1), args: z.array(z.string()).optional(), env: Env.optional() }),
  ),
});

/**
 * Cursor: cursor.com/docs/mcp, "STDIO server configuration": `{"mcpServers": {"<name>": {"command",
 * "args", "env"}}}` in ~/.cursor/mcp.json.
 */
export const CursorConfig = z.looseObject({
  mcpServers: z.record(
    z.string(),
    z.strictObject({ command: z.string().min(1), args: z.array(z.string()).optional(), env: Env.optional() }),
  ),
});

/**
 * VS Code: code.visualstudio.com/docs/copilot/reference/mcp-configuration, "Standard I/O (stdio)
 * servers": `{"servers": {"<name>": {"type": "stdio" (required), "command" (required), "args", "env",
 * "envFile"}}, "inputs": [...]}`.
 */
export const VsCodeConfig = z.looseObject({
  servers: z.record(
    z.string(),
    z.strictObject({
      type: z.literal('stdio'),
      command: z.string().min(1),
      args: z.array(z.string()).optional(),
      env: Env.optional(),
      envFile: z.string().optional(),
    }),
  ),
  inputs: z.array(z.unknown()).optional(),
});

/**
 * Claude Code: code.claude.com/docs/en/mcp: user-scope servers are the top-level "mcpServers" of
 * ~/.claude.json; `claude mcp add` writes stdio servers as `{"type": "stdio", "command", "args", "env"}`
 * (anthropics/claude-code issues #845 and #17791 show the written entries).
 */
export const ClaudeCodeUserConfig = z.looseObject({
  mcpServers: z.record(
    z.string(),
    z.strictObject({
      type: z.literal('stdio'),
      command: z.string().min(1),
      args: z.array(z.string()),
      env: Env,
    }),
  ),
});

/** The de facto common shape (FastMCP's "MCP JSON configuration standard"): mcpServers of command/args/env. */
export const GenericConfig = ClaudeDesktopConfig;

export const SCHEMAS = {
  'claude-desktop': ClaudeDesktopConfig,
  cursor: CursorConfig,
  vscode: VsCodeConfig,
  'claude-code': ClaudeCodeUserConfig,
  generic: GenericConfig,
} as const;
