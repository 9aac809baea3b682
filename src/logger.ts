/**
 * The service logger: pino, one JSON line per event, on stderr (stdout carries the MCP protocol over
 * stdio). Keys are never logged: headers are not logged at all and the request log omits query strings.
 * Writes are synchronous: an asynchronous buffer grew by hundreds of megabytes under load in the
 * benchmark, and loses the last lines when the process is killed.
 */
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'agent-context' } }, pino.destination({ fd: 2, sync: true }));
}
