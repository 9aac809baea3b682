/**
 * The life of a stdio server process: serve MCP on stdin/stdout through the SDK's `serveStdio` (which pins
 * each connection to the era its first message speaks, 2025 or 2026-07-28, and builds the server for it),
 * count the requests still to answer, and stop (after answering them, within the shutdown timeout) when the
 * client goes away or a signal comes; exit only once stdout has been handed on. The SDK's transport reads a
 * copy of stdin that never ends, because on its own it would drop the requests in flight when stdin closes.
 */
import { PassThrough } from 'node:stream';
import type { McpServer, Transport } from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../logger.js';
import type { McpEra } from './mcp-extra.js';
import { logSdkError } from './sdk-errors.js';

/** Builds the server for a connection of the given era. */
export type ServerFactory = (era: McpEra) => McpServer;

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

/** Exits once what was written to stdout has been handed on (a pipe may be asynchronous, as on macOS). */
export function exitWhenFlushed(code: number): void {
  process.stdout.write('', () => process.exit(code));
  setTimeout(() => process.exit(code), 1_000).unref();
}

/**
 * The SDK's stdio transport over a copy of stdin that never ends: on its own, the transport closes itself when
 * stdin ends and then refuses to send, which would drop the answers to the requests still in flight. Whoever
 * uses it stops it when the client is gone (onClientGone), after answering them.
 */
export function stdioWire(): StdioServerTransport {
  const input = new PassThrough();
  process.stdin.pipe(input, { end: false });
  return new StdioServerTransport(input, process.stdout);
}

/** Serves `factory`'s server on stdio and stops it (then `cleanup`) when the client goes away or on a signal. */
export async function serve(
  factory: ServerFactory,
  shutdownTimeoutMs: number,
  logger: Logger,
  cleanup: () => Promise<void>,
): Promise<void> {
  const transport = stdioWire();
  let closing: Promise<void> | undefined;
  const handle = serveStdio(({ era }) => factory(era), {
    transport,
    onerror: (err) => logSdkError(logger, err, 'MCP stdio'),
  });
  const requests = trackRequests(transport);
  const shutdown = (reason: string) => {
    closing ??= (async () => {
      logger.info({ reason }, 'MCP stdio server stopping');
      await requests.settled(shutdownTimeoutMs);
      await handle.close().catch(() => undefined);
      try {
        await cleanup();
      } catch (err) {
        logger.error({ err }, 'the store could not be closed cleanly');
        return exitWhenFlushed(1);
      }
      exitWhenFlushed(0);
    })();
    return closing;
  };
  onClientGone(shutdown);
}

export function onClientGone(stop: (reason: string) => unknown): void {
  process.stdin.on('end', () => void stop('stdin closed'));
  process.stdin.on('close', () => void stop('stdin closed'));
  process.stdout.on('error', () => void stop('stdout closed')); // the client went away (EPIPE)
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
