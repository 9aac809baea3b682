/**
 * Requests that Node's HTTP parser rejects before Express sees them (a malformed header, headers too
 * large) still get a JSON answer instead of a bare status line.
 */
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

export function answerClientErrorsWithJson(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const body = JSON.stringify(
      tooLarge
        ? {
            error: 'The request headers are too large; send fewer or shorter headers.',
            code: 'invalid_input',
          }
        : {
            error: 'The request could not be parsed as HTTP; check the request line and headers.',
            code: 'invalid_input',
          },
    );
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
