/** What the SDK hands every MCP request handler (the caller's auth info, _meta, notifications). */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

export type McpExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;
