/**
 * Graceful shutdown of the HTTP server: stop accepting connections, let the requests in flight finish
 * within a bound, then close whatever is left. While draining, every answer carries `Connection: close`
 * (requests already in flight whose headers are not yet sent included), so that no client sends another
 * request on a connection that is about to go; idle kept-alive connections are closed at once. Requests
 * that still arrive on an open connection are answered normally: the store is open until the drain ends.
 * A new long-lived event stream (GET with Accept: text/event-stream; /mcp itself keeps none) would hold the
 * drain to its bound, so it is refused with 503 and Retry-After.
 */
import type { Server } from 'node:http';
import type { RequestHandler, Response } from 'express';
import { JSON_RPC } from '../mcp/json-rpc-codes.js';
import { InFlightList } from './in-flight-list.js';

export interface Drain {
  /** Whether a shutdown has begun. */
  readonly draining: boolean;
  /** Mount first: tracks the requests in flight and marks answers while draining. */
  readonly middleware: RequestHandler;
  /**
   * Stops accepting connections and waits up to `timeoutMs` for the requests in flight; then closes every
   * connection left. Resolves once the server is closed, with the number of requests cut off.
   */
  close(server: Server, timeoutMs: number): Promise<{ cutOff: number }>;
}

export const DRAIN_RETRY_AFTER_S = 5;

function wantsEventStream(method: string, accept: string | undefined): boolean {
  return method === 'GET' && accept !== undefined && accept.includes('text/event-stream');
}

export function createDrain(): Drain {
  const inFlight = new InFlightList<Response>();
  let draining = false;
  let idle: (() => void) | undefined;

  const markClosing = (res: Response) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };

  const middleware: RequestHandler = (req, res, next) => {
    if (draining) {
      markClosing(res);
      if (wantsEventStream(req.method, req.headers.accept)) {
        res.setHeader('Retry-After', String(DRAIN_RETRY_AFTER_S));
        res.status(503).json({
          jsonrpc: '2.0',
          error: {
            code: JSON_RPC.transportRefused,
            message: 'The server is shutting down; reconnect in a few seconds.',
          },
          id: null,
        });
        return;
      }
    }
    const slot = inFlight.add(res);
    res.on('close', () => {
      inFlight.remove(slot, res);
      if (inFlight.size === 0) idle?.();
    });
    next();
  };

  return {
    get draining() {
      return draining;
    },
    middleware,
    close: async (server, timeoutMs) => {
      draining = true;
      for (const res of inFlight.items()) markClosing(res);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        if (inFlight.size === 0) return resolve();
        idle = resolve;
        timer = setTimeout(resolve, timeoutMs);
      });
      clearTimeout(timer);
      idle = undefined;
      const cutOff = inFlight.size;
      // Requests that did not finish in time, idle connections and half-sent requests: closed now.
      server.closeAllConnections();
      await closed;
      return { cutOff };
    },
  };
}
