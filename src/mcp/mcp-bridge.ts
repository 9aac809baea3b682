/**
 * `agent-context mcp` beside a running `agent-context serve` on the same DATA_DIR: instead of refusing (one
 * writer per store), the stdio process relays its client's JSON-RPC messages to the server's /mcp over
 * Streamable HTTP, as the same agent, so every operation lands in the one store and ledger, and tools,
 * resources, prompts and errors are the server's own. The relay keeps no state of the conversation beyond
 * the client's initialize request, which it replays when the server has expired the session.
 *
 * Every request the client sends gets exactly one answer: the server's, or one the bridge words (see
 * bridge-answers.ts) when the server is gone, lost the session under it, or refused it at the HTTP level.
 * When the server goes away the bridge ends cleanly, after answering; the client's next start opens the
 * store directly. It only ever talks to the process that holds the store (`stillHeld`).
 */
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../logger.js';
import { reachableUrl } from '../store/data-dir-lock.js';
import { refusedAnswer, serverGoneMessage, sessionLostMessage, unavailableAnswer } from './bridge-answers.js';

/** How long a liveness check of the server, or a renewal of the session, may take. */
const CHECK_TIMEOUT_MS = 2_000;
const RENEW_TIMEOUT_MS = 10_000;

export interface BridgeOptions {
  /** The server's base URL, from the DATA_DIR lock (e.g. `http://127.0.0.1:8787`). */
  serverUrl: string;
  /** The MCP endpoint and the ping path on it. */
  mcpPath: string;
  pingPath: string;
  /** The API key the bridge presents: AC_API_KEY, else the local agent's. */
  key: string;
  dataDir: string;
  /** Whether the lock still names the server the bridge started with (not another process on its port). */
  stillHeld(): Promise<boolean>;
  /** At close, how long answers still due may take. */
  shutdownTimeoutMs: number;
  logger: Logger;
  /** The client side: stdio in production. */
  client: Transport;
}

export interface Bridge {
  /** Resolves once the bridge has ended: the client went away, or the server did. */
  ended: Promise<{ reason: string }>;
  /** Waits (at most the shutdown timeout) for the answers still due, then ends the session. */
  close(reason: string): Promise<void>;
}

/** The server went away, or is no longer the one that holds the store: `why` says which. */
class ServerGone extends Error {
  constructor(readonly why: string) {
    super(why);
  }
}

/** `promise`, or undefined once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function startMcpBridge(options: BridgeOptions): Promise<Bridge> {
  const { client, logger } = options;
  const base = reachableUrl(options.serverUrl);
  const endpoint = new URL(options.mcpPath, base);
  let server = connectServer();
  /** The client's initialize request, replayed when the server has forgotten the session. */
  let initialize: JSONRPCRequest | undefined;
  /** Requests relayed and not yet answered, by id. */
  const pending = new Map<string | number, JSONRPCRequest>();
  let settled: (() => void) | undefined;
  /** Messages go to the server one after another, so that a session renewal holds the rest back. */
  let queue: Promise<void> = Promise.resolve();
  let renewals = 0;
  /** Why the server is gone, once it is. */
  let gone: string | undefined;
  let ending = false;
  let end: (value: { reason: string }) => void = () => undefined;
  const ended = new Promise<{ reason: string }>((resolve) => {
    end = resolve;
  });

  function connectServer(): StreamableHTTPClientTransport {
    const transport = new StreamableHTTPClientTransport(endpoint, {
      requestInit: { headers: { 'X-API-Key': options.key } },
    });
    transport.onmessage = (message) => void fromServer(message);
    // A broken event stream may mean the server stopped: check, and say so if it did.
    transport.onerror = (err) => {
      logger.debug({ err }, 'MCP bridge: server transport error');
      void checkServer();
    };
    return transport;
  }

  function settle(id: string | number): JSONRPCRequest | undefined {
    const request = pending.get(id);
    pending.delete(id);
    if (pending.size === 0) settled?.();
    return request;
  }

  /** Sends the client the answer to a request still due; an answer to one no longer due is dropped. */
  async function answer(message: JSONRPCMessage): Promise<void> {
    if (!(isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))) return;
    if (message.id === undefined || !settle(message.id)) return;
    await client.send(message).catch(() => undefined);
  }

  async function fromServer(message: JSONRPCMessage): Promise<void> {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      if (message.id !== undefined && pending.get(message.id)?.method === 'initialize') {
        if (isJSONRPCResultResponse(message))
          server.setProtocolVersion(String(message.result.protocolVersion));
      }
      return answer(message);
    }
    await client.send(message).catch(() => undefined); // notifications and requests of the server
  }

  /**
   * Starts a new session with the client's own initialize request. Requests on the lost session other than
   * `retrying` will get no answer from the server: they are answered here.
   */
  async function renewSession(retrying: JSONRPCMessage): Promise<void> {
    if (!initialize) throw new Error('no session to renew');
    if (!(await options.stillHeld())) throw new ServerGone('it gave up the store');
    for (const request of [...pending.values()]) {
      if (request !== retrying) await answer(unavailableAnswer(request, sessionLostMessage(base)));
    }
    const protocolVersion = server.protocolVersion;
    await server.close().catch(() => undefined);
    server = connectServer();
    await server.start();
    const id = `bridge-renew-${++renewals}`;
    const replied = new Promise<void>((resolve, reject) => {
      const relayAll = server.onmessage;
      server.onmessage = (message) => {
        if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id === id) {
          server.onmessage = relayAll;
          if (isJSONRPCErrorResponse(message)) reject(new Error(message.error.message));
          else resolve();
          return;
        }
        relayAll?.(message);
      };
    });
    await server.send({ ...initialize, id });
    if (
      (await within(
        replied.then(() => true),
        RENEW_TIMEOUT_MS,
      )) !== true
    ) {
      throw new ServerGone('it did not answer a new initialize');
    }
    if (protocolVersion) server.setProtocolVersion(protocolVersion);
    await server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    logger.info('MCP bridge: the server had lost the session; a new one was started');
  }

  async function relay(message: JSONRPCMessage): Promise<void> {
    if (gone !== undefined) {
      // The server went away while nothing was waiting: say so in this answer, then end.
      if (!isJSONRPCRequest(message)) return;
      await client.send(unavailableAnswer(message, serverGoneMessage(base, options.dataDir, gone, false)));
      return finish(`the server ${gone}`);
    }
    if (ending) return;
    if (isJSONRPCRequest(message)) {
      if (message.method === 'initialize') initialize = message;
      pending.set(message.id, message);
    }
    try {
      await server.send(message);
    } catch (err) {
      if (err instanceof StreamableHTTPError && err.code === 404 && initialize && message !== initialize) {
        try {
          await renewSession(message);
          await server.send(message);
          return;
        } catch (renewErr) {
          return failed(message, renewErr);
        }
      }
      return failed(message, err);
    }
  }

  /** A message the server did not take: it refused it at the HTTP level, or it is gone. */
  async function failed(message: JSONRPCMessage, err: unknown): Promise<void> {
    if (!(err instanceof StreamableHTTPError)) {
      logger.info({ err }, 'MCP bridge: the server cannot be reached');
      return serverGone(err instanceof ServerGone ? err.why : 'it cannot be reached', message);
    }
    if (isJSONRPCRequest(message)) await answer(refusedAnswer(message, err));
  }

  /**
   * Answers every request still waiting, and ends the bridge. When none was waiting, the bridge stays until
   * the client's next request, so that the person reads why in its answer rather than a closed connection.
   */
  async function serverGone(why: string, refused?: JSONRPCMessage): Promise<void> {
    if (ending || gone !== undefined) return;
    gone = why;
    await server.close().catch(() => undefined); // no late answer after ours
    const waiting = [...pending.values()];
    for (const request of waiting) {
      const text = serverGoneMessage(base, options.dataDir, why, request !== refused);
      await answer(unavailableAnswer(request, text));
    }
    if (waiting.length > 0) finish(`the server ${why}`);
  }

  function finish(reason: string): void {
    if (ending) return;
    ending = true;
    end({ reason });
  }

  async function checkServer(): Promise<void> {
    if (ending || gone !== undefined) return;
    const alive = await fetch(new URL(options.pingPath, base), {
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
    })
      .then((res) => res.ok)
      .catch(() => false);
    if (alive && (await options.stillHeld())) return;
    logger.info({ server: base }, 'MCP bridge: the server no longer answers');
    await serverGone(alive ? 'it gave up the store' : 'it no longer answers');
  }

  client.onmessage = (message) => {
    queue = queue
      .then(() => relay(message))
      .catch((err) => logger.error({ err }, 'MCP bridge: a message could not be relayed'));
  };
  client.onclose = () => finish('the client closed the connection');
  await server.start();
  await client.start();
  logger.info(
    { server: base, dataDir: options.dataDir },
    `store: ${options.dataDir}, held by the server at ${base}; MCP bridge: relaying to ${endpoint.href}`,
  );

  return {
    ended,
    close: async (reason) => {
      finish(reason);
      const drained = new Promise<void>((resolve) => {
        settled = resolve;
        if (pending.size === 0) resolve();
      });
      await within(
        queue.then(() => drained),
        options.shutdownTimeoutMs,
      );
      if (gone === undefined)
        await within(
          server.terminateSession().catch(() => undefined),
          CHECK_TIMEOUT_MS,
        );
      await server.close().catch(() => undefined);
    },
  };
}
