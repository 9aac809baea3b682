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
import type { Socket } from 'node:net';
import type { Express } from 'express';

export interface MessageClasses {
  IncomingMessage?: typeof IncomingMessage;
  ServerResponse?: typeof ServerResponse;
}

type Construct = (this: unknown, ...args: unknown[]) => void;

/** Whether `maker` can be called on an object of ours (an ES5 function, as Node's are), not only `new`ed. */
function callable(maker: unknown): maker is Construct {
  return typeof maker === 'function' && !Function.prototype.toString.call(maker).startsWith('class');
}

/**
 * `createServer`'s IncomingMessage and ServerResponse for `app`: Node's, with the app's prototypes; none
 * (Node's defaults, and Express's per-request prototype change) should a Node release make them classes.
 */
export function expressMessages(app: Express): MessageClasses {
  if (!callable(IncomingMessage) || !callable(ServerResponse)) return {};
  const incoming = IncomingMessage;
  const outgoing = ServerResponse;
  // Plain functions, so that `prototype` can be the app's own object, calling Node's constructors on the new
  // object (`Reflect.construct` with a new target did the same, but measured three times slower than this).
  function Request(this: unknown, socket: Socket): void {
    incoming.call(this, socket);
  }
  Request.prototype = app.request;
  function Response(this: unknown, req: IncomingMessage, options?: unknown): void {
    outgoing.call(this, req, options);
  }
  Response.prototype = app.response;
  return {
    IncomingMessage: Request as unknown as typeof IncomingMessage,
    ServerResponse: Response as unknown as typeof ServerResponse,
  };
}
