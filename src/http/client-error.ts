/**
 * Requests that Node's HTTP server refuses before Express sees them still get a JSON answer instead of a
 * bare status line: a malformed request line or header (400), headers too large (431), a chunk extension
 * too large (413), and a client too slow to send its headers or its whole request (408, from
 * `headersTimeout` and `requestTimeout`).
 */
import { type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError } from '../core/errors.js';
import { httpStatusOf } from './http-status.js';

export function clientErrorToAppError(err: NodeJS.ErrnoException): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(
        'headers_too_large',
        'The request line and headers are too large (at most 16 KiB); send fewer or shorter headers and a shorter URL.',
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError(
        'payload_too_large',
        'The chunk extensions of the request body are too large; send the body without chunk extensions.',
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(
        'request_timeout',
        'The request took too long to arrive (headers or body); send the whole request at once and retry.',
      );
    default:
      return new AppError(
        'invalid_input',
        'The request could not be parsed as HTTP; check the request line and headers.',
      );
  }
}

export function answerClientErrorsWithJson(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already under way on this connection must not be corrupted by a second status line.
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || inFlight?.headersSent) return socket.destroy();
    const error = clientErrorToAppError(err);
    const body = JSON.stringify(error.toBody());
    socket.end(
      `HTTP/1.1 ${httpStatusOf(error)} ${STATUS_CODES[httpStatusOf(error)]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  });
}
