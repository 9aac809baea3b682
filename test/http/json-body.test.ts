/**
 * The JSON body reader (src/http/json-body.ts): its fast path for plain `application/json` must answer
 * exactly as `express.json` does. Each body is sent twice to a small app with the real middleware and
 * error handler: once as `application/json` (the fast path) and once as `application/vnd.ac-test+json`
 * (express.json itself), and the two answers are compared.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../../src/http/error-handler.js';
import { jsonBody, readsDirectly } from '../../src/http/json-body.js';
import { createLogger } from '../../src/logger.js';
import { exchange, rawRequest, trickle } from '../helpers/raw-http.js';

const LIMIT = 200;
let server: Server;
let url: string;
/** The body-parser error types that reached the error handler. */
const errorTypes: string[] = [];

beforeAll(async () => {
  const app = express();
  app.use(jsonBody(LIMIT));
  app.post('/echo', (req, res) => {
    res.json({ body: req.body ?? null });
  });
  app.use((err: { type?: string }, _req: Request, _res: Response, next: NextFunction) => {
    errorTypes.push(err.type ?? 'other');
    next(err);
  });
  app.use(errorHandler(createLogger('silent')));
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const FALLBACK_TYPE = 'application/vnd.ac-test+json';

async function post(body: string | Buffer, contentType: string) {
  const res = await rawRequest(url, {
    method: 'POST',
    path: '/echo',
    headers: { 'Content-Type': contentType },
    body,
  });
  return { status: res.status, body: res.body as unknown };
}

async function expectSameAnswer(body: string | Buffer) {
  const fast = await post(body, 'application/json');
  const fallback = await post(body, FALLBACK_TYPE);
  expect(fast, `body ${JSON.stringify(body.toString())}`).toEqual(fallback);
  return fast;
}

describe('the JSON body fast path', () => {
  it('takes only plain JSON with a sane length: other types, charsets, encodings and lengths go to express.json', () => {
    const h = (headers: Record<string, string>) => ({ 'content-length': '20', ...headers });
    expect(readsDirectly(h({ 'content-type': 'application/json' }), LIMIT)).toBe(20);
    expect(readsDirectly(h({ 'content-type': 'Application/JSON; Charset=UTF-8' }), LIMIT)).toBe(20);
    expect(readsDirectly(h({ 'content-type': 'application/json;charset=utf-8' }), LIMIT)).toBe(20);
    for (const other of [
      h({ 'content-type': 'application/json; charset=latin1' }),
      h({ 'content-type': FALLBACK_TYPE }),
      h({ 'content-type': 'text/plain' }),
      h({ 'content-type': 'application/json', 'content-encoding': 'gzip' }),
      h({ 'content-type': 'application/json', 'transfer-encoding': 'chunked' }),
      { 'content-type': 'application/json', 'content-length': '0' },
      { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) },
      { 'content-type': 'application/json', 'content-length': '1e1' },
      { 'content-type': 'application/json' },
    ]) {
      expect(readsDirectly(other, LIMIT), JSON.stringify(other)).toBeUndefined();
    }
  });

  it('answers as express.json does: objects, arrays, whitespace, a byte-order mark, scalars, broken JSON, bad UTF-8', async () => {
    const answers = [];
    for (const body of [
      '{"a":1,"b":[true,null,"é"]}',
      ' \n\t\r{"a":"x"} \n',
      '\uFEFF{"a":1}',
      '[1,2,3]',
      '"just a string"',
      '42',
      'null',
      'true',
      '{"a":',
      '{"a":1} trailing',
      '{"a":1}{"b":2}',
      '\uFEFF',
      '   ',
      '{"surrogate":"\\ud800"}',
      '{"__proto__":{"polluted":true}}', // an own key for both parsers, never a prototype
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      `{"big":"${'x'.repeat(LIMIT)}"}`,
    ]) {
      answers.push(await expectSameAnswer(body));
    }
    // The comparison is meaningful: both valid and refused bodies are among them.
    expect(answers[0]).toEqual({ status: 200, body: { body: { a: 1, b: [true, null, 'é'] } } });
    expect(answers[2]).toEqual({ status: 200, body: { body: { a: 1 } } });
    expect(answers[4]?.status).toBe(400);
    expect(answers[4]?.body).toMatchObject({ code: 'invalid_json' });
    expect(answers.at(-1)?.status).toBe(413);
  });

  it('answers as express.json does for any JSON value, with any JSON whitespace around it', async () => {
    const ws = fc.stringMatching(/^[ \t\n\r]{0,3}$/);
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), ws, ws, async (value, before, after) => {
        const text = before + JSON.stringify(value) + after;
        if (Buffer.byteLength(text) > LIMIT) return;
        await expectSameAnswer(text);
      }),
      { numRuns: Number(process.env.AC_PROPERTY_RUNS ?? 60) },
    );
  });

  it('reads a body that arrives in pieces, a UTF-8 character split between them', async () => {
    const bytes = Buffer.from('{"city":"Zürich","n":1}');
    const split = bytes.indexOf(0xc3) + 1; // between the two bytes of "ü"
    const res = await exchange(url, (socket) =>
      trickle(
        socket,
        [
          `POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`,
          bytes.subarray(0, split),
          bytes.subarray(split),
        ],
        30,
      ),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ body: { city: 'Zürich', n: 1 } });
  });

  it('a client that leaves mid-body is let go (one request.aborted error), and the next request is answered', async () => {
    errorTypes.length = 0;
    await exchange(url, async (socket) => {
      socket.write(
        'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a":',
      );
      await new Promise((resolve) => setTimeout(resolve, 30));
      socket.destroy();
    });
    expect(await post('{"after":true}', 'application/json')).toEqual({
      status: 200,
      body: { body: { after: true } },
    });
    expect(errorTypes).toEqual(['request.aborted']);
  });

  it('a body that is not JSON is refused with 415 before it is read', async () => {
    const res = await post('a=1', 'application/x-www-form-urlencoded');
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ code: 'unsupported_media_type' });
  });
});
