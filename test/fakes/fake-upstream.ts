/**
 * A fake upstream HTTP server on loopback for tests: routes by path, records every request (path, query,
 * headers), and answers JSON, text/HTML, a bare status, after a delay (for timeouts), or by destroying the
 * socket (for network errors). The machine has no internet, so every upstream is tested against this.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/search`. */
  path: string;
  /** Decoded query parameters (last value wins). */
  query: Record<string, string>;
  /** Header names are lower case. */
  headers: IncomingHttpHeaders;
  /** Raw request target: path and query exactly as sent. */
  rawUrl: string;
}

interface ReplyBase {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
}

export type FakeReply =
  | (ReplyBase & { json: unknown })
  /** A text body; contentType defaults to `text/html; charset=utf-8`. */
  | (ReplyBase & { text: string; contentType?: string })
  /** An empty body with the status. */
  | (ReplyBase & { status: number })
  /** Close the connection without answering. */
  | { destroy: true; delayMs?: number };

export type FakeHandler = FakeReply | ((request: RecordedRequest) => FakeReply);

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Sets (or replaces) the answer for a path; unrouted paths answer 404 JSON. */
  route(path: string, handler: FakeHandler): void;
  /** Forgets routes and recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, reply: FakeReply): void {
  if (res.destroyed || res.writableEnded) return;
  if ('destroy' in reply) {
    res.socket?.destroy();
    return;
  }
  const headers = { ...reply.headers };
  let body = '';
  if ('json' in reply) {
    body = JSON.stringify(reply.json);
    headers['content-type'] ??= 'application/json; charset=utf-8';
  } else if ('text' in reply) {
    body = reply.text;
    headers['content-type'] ??= reply.contentType ?? 'text/html; charset=utf-8';
  }
  res.writeHead(reply.status ?? 200, headers);
  res.end(body);
}

export async function startFakeUpstream(routes: Record<string, FakeHandler> = {}): Promise<FakeUpstream> {
  const table = new Map(Object.entries(routes));
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();

  const server = createServer((req, res) => {
    const target = new URL(req.url ?? '/', 'http://fake.invalid');
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: target.pathname,
      query: Object.fromEntries(target.searchParams),
      headers: req.headers,
      rawUrl: req.url ?? '/',
    };
    requests.push(recorded);
    const handler = table.get(recorded.path);
    const reply: FakeReply =
      handler === undefined
        ? { status: 404, json: { error: `no fake route for ${recorded.path}` } }
        : typeof handler === 'function'
          ? handler(recorded)
          : handler;
    if (!reply.delayMs) return send(res, reply);
    const timer = setTimeout(() => {
      timers.delete(timer);
      send(res, reply);
    }, reply.delayMs);
    timers.add(timer);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    route(path, handler) {
      table.set(path, handler);
    },
    reset() {
      table.clear();
      requests.length = 0;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

/** A loopback URL on which nothing listens: a server was bound to the port and closed again. */
export async function closedPortUrl(): Promise<string> {
  const fake = await startFakeUpstream();
  await fake.close();
  return fake.url;
}
