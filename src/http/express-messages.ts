/**
 * The request and response classes the HTTP server makes its messages with: Node's own, built so that each
 * message is born with the Express app's request or response prototype.
 *
 * Express 5 hands every request to the app with `Object.setPrototypeOf(req, app.request)` and the same for
 * the response. Changing the prototype of an object that already exists is slow in V8, and here it also
 * made most of what a request allocated survive the next young-generation collection: a bare Express app
 * measured 2,700–3,700 requests a second with 4.6–8 ms scavenge pauses (4 MB copied at each), and the same
 * app on these classes 6,000–6,800 with pauses under 1 ms and nothing copied (BENCHMARKS.md). A message that
 * already has the app's prototype makes Express's call a no-op (V8 returns at once when the prototype is
 * unchanged), so Express still runs as it is, with nothing of it patched.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';

export interface MessageClasses {
  IncomingMessage?: typeof IncomingMessage;
  ServerResponse?: typeof ServerResponse;
}

type Construct = (this: unknown, ...args: unknown[]) => void;

/**
 * Whether Node's constructors run on objects of ours: tried once at start-up on two throwaway messages, so
 * that a Node whose constructors cannot be called so (classes, or wrappers that insist on `new`: calling
 * them throws) falls back here rather than failing on every request.
 */
function constructsOnOurs(app: Express, incoming: Construct, outgoing: Construct): boolean {
  try {
    const req = Object.create(app.request) as IncomingMessage;
    incoming.call(req, undefined);
    req.method = 'GET';
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    outgoing.call(Object.create(app.response), req, {});
    return true;
  } catch {
    return false;
  }
}

/**
 * `createServer`'s IncomingMessage and ServerResponse for `app`: Node's, with the app's prototypes; none
 * (Node's defaults, and Express's per-request prototype change) should Node's constructors not run on an
 * object of ours.
 */
export function expressMessages(app: Express): MessageClasses {
  // Typed as what they are in Node 20 (plain functions); the trial below checks that they can be called so.
  const incoming = IncomingMessage as unknown as Construct;
  const outgoing = ServerResponse as unknown as Construct;
  if (!constructsOnOurs(app, incoming, outgoing)) return {};
  // Plain functions, so that `prototype` can be the app's own object, calling Node's constructors on the new
  // object with whatever Node passes (`Reflect.construct` with a new target did the same, but measured three
  // times slower than this). Named by their keys, so that stack traces and profiles still say IncomingMessage
  // and ServerResponse.
  const made = {
    IncomingMessage: function (this: unknown, ...args: unknown[]): void {
      incoming.apply(this, args);
    },
    ServerResponse: function (this: unknown, ...args: unknown[]): void {
      outgoing.apply(this, args);
    },
  };
  made.IncomingMessage.prototype = app.request;
  made.ServerResponse.prototype = app.response;
  return {
    IncomingMessage: made.IncomingMessage as unknown as typeof IncomingMessage,
    ServerResponse: made.ServerResponse as unknown as typeof ServerResponse,
  };
}
