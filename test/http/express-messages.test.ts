/**
 * The server makes its requests and responses with the Express app's prototypes already in place
 * (src/http/express-messages.ts), so that Express's per-request `Object.setPrototypeOf` changes nothing.
 * Observed from outside Express: a listener put before the app on the real server's 'request' event sees
 * each message as Node made it. A stock server (Node's classes) is the control: there the prototypes differ.
 */
import { createServer, IncomingMessage, request, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expressMessages } from '../../src/http/express-messages.js';
import { FakeLiveSource } from '../fakes/fake-live-source.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { initializeRequest } from '../mcp/mcp-harness.js';

interface Arrival {
  url: string | undefined;
  requestHasAppPrototype: boolean;
  responseHasAppPrototype: boolean;
  nodeMessages: boolean;
}

/** Records, for every request `server` receives, how its messages looked before `app` saw them. */
function watchArrivals(server: Server, app: Express): Arrival[] {
  const arrivals: Arrival[] = [];
  server.prependListener('request', (req, res) => {
    arrivals.push({
      url: req.url,
      requestHasAppPrototype: Object.getPrototypeOf(req) === app.request,
      responseHasAppPrototype: Object.getPrototypeOf(res) === app.response,
      nodeMessages: req instanceof IncomingMessage && res instanceof ServerResponse,
    });
  });
  return arrivals;
}

/** A memory_store sent with `Expect: 100-continue`: the body goes only once the server says 100 Continue. */
function postExpectingContinue(base: string, key: string): Promise<{ sawContinue: boolean; status: number }> {
  const body = JSON.stringify({ agent_key: key, memory_key: 'continued', memory_value: 'v' });
  return new Promise((resolve, reject) => {
    let sawContinue = false;
    const req = request(`${base}/api/ac/memory`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-api-key': key,
        expect: '100-continue',
      },
    });
    req.on('continue', () => {
      sawContinue = true;
      req.end(body);
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ sawContinue, status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe("the server's messages", () => {
  let server: TestServer;
  let arrivals: Arrival[];

  beforeAll(async () => {
    server = await startTestServer({ live: new FakeLiveSource() });
    const app = server.running.server.listeners('request')[0] as Express;
    expect(app.request).toBeDefined(); // the Express app is the server's own listener
    arrivals = watchArrivals(server.running.server, app);
  });
  afterAll(() => server.close());

  it("are born with the app's prototypes, for REST, MCP, HEAD, 100-continue and unknown paths alike, and answer as before", async () => {
    const key = await server.register();
    const stored = await server.request('POST', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: 'k', memory_value: 'v' },
    });
    expect(stored.status).toBe(200);
    const read = await server.request('GET', '/api/ac/memory', {
      key,
      query: { agent_key: key, memory_key: 'k' },
    });
    expect(read.body.memory.memory_value).toBe('v');
    expect((await server.request('GET', '/api/ac/nowhere')).status).toBe(404);
    const mcp = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-api-key': key,
      },
      body: JSON.stringify(initializeRequest()),
    });
    expect(mcp.status).toBe(200);
    await mcp.body?.cancel();
    const head = await fetch(`${server.url}/api/ac/ping`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const continued = await postExpectingContinue(server.url, key);
    expect(continued).toEqual({ sawContinue: true, status: 200 });

    expect(arrivals.length).toBeGreaterThanOrEqual(7);
    for (const arrival of arrivals) {
      expect(arrival).toEqual({
        url: arrival.url,
        requestHasAppPrototype: true,
        responseHasAppPrototype: true,
        nodeMessages: true,
      });
    }
  });
});

describe('a stock server (the control)', () => {
  async function arrivalsOf(withClasses: boolean) {
    const app = express();
    app.get('/', (_req, res) => {
      res.json({ ok: true });
    });
    const server = withClasses ? createServer({ ...expressMessages(app) }, app) : createServer(app);
    const arrivals = watchArrivals(server, app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const answer = await fetch(`http://127.0.0.1:${port}/`);
      expect(await answer.json()).toEqual({ ok: true });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    return arrivals;
  }

  it("hands Express Node's own messages, whose prototypes Express then changes", async () => {
    const [arrival] = await arrivalsOf(false);
    expect(arrival).toMatchObject({ requestHasAppPrototype: false, responseHasAppPrototype: false });
  });

  it('with the classes, the same app gets messages that already have its prototypes', async () => {
    const [arrival] = await arrivalsOf(true);
    expect(arrival).toMatchObject({
      requestHasAppPrototype: true,
      responseHasAppPrototype: true,
      nodeMessages: true,
    });
  });
});
