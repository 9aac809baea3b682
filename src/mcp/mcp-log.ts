/**
 * Log notifications (`notifications/message`) to the MCP client, only for requests that asked for them: on
 * the 2026-07-28 revision a request asks with `io.modelcontextprotocol/logLevel` in its `_meta` (and the
 * revision forbids logs to any other request); on the 2025 revisions a connection asks with
 * `logging/setLevel`, which holds for that connection (over HTTP, where each request is served alone, for its
 * own request only). Nothing is sent to a client that never asked: a log line per call would cost a desktop
 * client's pipe as much as the call.
 */
import { LOG_LEVEL_META_KEY, type LoggingLevel, type McpServer } from '@modelcontextprotocol/server';
import { envelopeOf, type McpEra, type McpExtra } from './mcp-extra.js';

export type McpLog = (extra: McpExtra, level: LoggingLevel, data: Record<string, unknown>) => Promise<void>;

const SEVERITY: Record<LoggingLevel, number> = {
  debug: 0,
  info: 1,
  notice: 2,
  warning: 3,
  error: 4,
  critical: 5,
  alert: 6,
  emergency: 7,
};

const LOGGER = 'agent-context';

/** Installs the era's way of asking for logs on `server` and gives the function that sends them. */
export function installLogging(server: McpServer, era: McpEra): McpLog {
  let connectionLevel: LoggingLevel | undefined;
  if (era === 'legacy') {
    server.server.setRequestHandler('logging/setLevel', (request) => {
      connectionLevel = request.params.level;
      return {};
    });
  }
  return async (extra, level, data) => {
    const threshold =
      era === 'modern'
        ? (envelopeOf(extra)?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined)
        : connectionLevel;
    if (threshold === undefined || SEVERITY[level] < SEVERITY[threshold]) return;
    await extra.mcpReq
      .notify({ method: 'notifications/message', params: { level, logger: LOGGER, data } })
      .catch(() => undefined);
  };
}
