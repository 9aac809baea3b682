/**
 * A raw HTTP/1.1 client over node:net, for inputs fetch cannot send: huge or malformed headers, bad request
 * lines, lying Content-Length, compressed bodies, and clients that send slowly. Every exchange closes the
 * connection, so the whole answer is whatever arrives before the server closes it.
 */
import net from 'node:net';

export interface RawResponse {
  /** 0 when nothing that looks like an HTTP response arrived. */
  status: number;
  headers: Record<string, string>;
  text: string;
  body: any;
  /** The unparsed bytes received, for diagnostics. */
  raw: string;
}

export interface RawRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

export function parseResponse(raw: Buffer): RawResponse {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/u.exec(statusLine)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const bodyText = end === -1 ? '' : text.slice(end + 4);
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  return { status, headers, text: bodyText, body, raw: text };
}

/** The bytes of a request: Host and Connection: close added, Content-Length computed unless given. */
export function requestBytes(req: RawRequest): Buffer {
  const body = req.body === undefined ? undefined : Buffer.from(req.body);
  const headers: Record<string, string> = { Host: '127.0.0.1', Connection: 'close', ...req.headers };
  const named = (name: string) => Object.keys(headers).some((h) => h.toLowerCase() === name);
  if (body !== undefined && !named('content-length') && !named('transfer-encoding')) {
    headers['Content-Length'] = String(body.length);
  }
  const head =
    `${req.method ?? 'GET'} ${req.path} HTTP/1.1\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  return Buffer.concat([Buffer.from(head, 'latin1'), body ?? Buffer.alloc(0)]);
}

/**
 * Connects, lets `send` write (all at once or slowly), and resolves with the answer once the server closes
 * the connection. Write errors after the server has answered (it may close first) are ignored.
 */
export function exchange(
  url: string,
  send: (socket: net.Socket) => void | Promise<void>,
  timeoutMs = 15_000,
): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms; got: ${Buffer.concat(chunks).toString()}`));
    }, timeoutMs);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(chunks)));
    });
    socket.on('connect', () => {
      Promise.resolve(send(socket)).catch(() => undefined);
    });
  });
}

/** Sends one request in a single write. */
export function rawRequest(url: string, req: RawRequest | string | Buffer): Promise<RawResponse> {
  const bytes = typeof req === 'string' || Buffer.isBuffer(req) ? Buffer.from(req) : requestBytes(req);
  return exchange(url, (socket) => {
    socket.write(bytes);
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Writes `parts` one after the other, `gapMs` apart, while the socket is open; never ends the request. */
export async function trickle(socket: net.Socket, parts: (string | Buffer)[], gapMs: number): Promise<void> {
  for (const part of parts) {
    if (socket.destroyed) return;
    socket.write(part);
    await sleep(gapMs);
  }
}
