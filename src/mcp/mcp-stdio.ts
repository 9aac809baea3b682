/**
 * `agent-context mcp`: the MCP server over stdio for desktop clients. stdout carries only the protocol;
 * logs go to stderr. The key is AC_API_KEY, or the local agent's. It exits cleanly (0), store flushed and
 * DATA_DIR lock released, when stdin closes or on SIGTERM/SIGINT, after the requests in flight have been
 * answered or AC_SHUTDOWN_TIMEOUT_MS has passed.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { openService } from '../app.js';
import type { Config } from '../config.js';
import { DataDirLockedError } from '../store/data-dir-lock.js';
import { createMcpServer } from './create-mcp-server.js';
import { localAgentKey } from './local-agent.js';
import { MCP_PATH } from './mcp-http.js';

/** Counts the requests received on `transport` and not yet answered; call after connecting it. */
function trackRequests(transport: Transport): { settled(timeoutMs: number): Promise<void> } {
  const pending = new Set<string | number>();
  let idle: (() => void) | undefined;
  const receive = transport.onmessage;
  const send = transport.send.bind(transport);
  transport.onmessage = (message, extra) => {
    if ('method' in message && 'id' in message) pending.add(message.id);
    receive?.(message, extra);
  };
  transport.send = async (message, options) => {
    try {
      return await send(message, options);
    } finally {
      const id = 'method' in message || !('id' in message) ? undefined : message.id;
      if (id !== undefined && pending.delete(id) && pending.size === 0) idle?.();
    }
  };
  return {
    settled: (timeoutMs) =>
      new Promise<void>((resolve) => {
        if (pending.size === 0) return resolve();
        const timer = setTimeout(resolve, timeoutMs);
        idle = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
  };
}

export async function runStdioServer(config: Readonly<Config>): Promise<void> {
  const service = await openService(config, { command: 'mcp' }).catch((err) => {
    if (!(err instanceof DataDirLockedError)) throw err;
    const hint = err.holder.url
      ? `or attach your MCP client to the running server instead: Streamable HTTP at ${err.holder.url}${MCP_PATH} ` +
        'with the header "X-API-Key: <key>" (see the agent-context-http entry of mcp.json).'
      : 'or give each MCP client its own DATA_DIR, or run one server (npm start) and attach every client to ' +
        'its /mcp endpoint over HTTP.';
    throw new DataDirLockedError(err.dataDir, err.holder, hint);
  });
  const key = config.apiKey ?? (await localAgentKey(service.core, config.dataDir));
  if (config.apiKey) {
    await service.core.accounts.authenticate(config.apiKey).catch(() => {
      service.logger.warn('AC_API_KEY is not a known key here; tool calls will fail until it is fixed');
    });
  }
  const server = createMcpServer({ ...service, keyOf: () => key });
  const transport = new StdioServerTransport();

  let requests: ReturnType<typeof trackRequests> | undefined;
  let closing: Promise<void> | undefined;
  const shutdown = (reason: string) => {
    closing ??= (async () => {
      service.logger.info({ reason }, 'MCP stdio server stopping');
      await requests?.settled(config.shutdownTimeoutMs);
      await server.close().catch(() => undefined);
      await service.close();
      process.exit(0);
    })();
    return closing;
  };
  process.stdin.on('end', () => void shutdown('stdin closed'));
  process.stdin.on('close', () => void shutdown('stdin closed'));
  process.stdout.on('error', () => void shutdown('stdout closed')); // the client went away (EPIPE)
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await server.connect(transport);
  requests = trackRequests(transport);
  service.logger.info(
    { dataDir: config.dataDir, localAgent: config.apiKey === undefined },
    'MCP stdio server ready',
  );
}
