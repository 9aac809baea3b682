/**
 * `agent-context mcp` beside a running `agent-context serve` on the same DATA_DIR: instead of refusing (one
 * writer per store), the stdio process relays its client's JSON-RPC messages to the server's /mcp over
 * Streamable HTTP, as the same agent, so every operation lands in the one store and ledger, and tools,
 * resources, prompts and errors are the server's own. Both protocol eras pass through unchanged: the SDK's
 * client transport sends a 2026-07-28 message with the headers its `_meta` implies, a 2025 one with the
 * version its initialize agreed. /mcp keeps no session, so the relay keeps no state of the conversation.
 *
 * Every request the client sends gets exactly one answer: the server's, or one the bridge words (see
 * bridge-answers.ts) when the server is gone or refused it at the HTTP level.
 * When the server goes away the bridge ends cleanly, after answering; the client's next start opens the
 * store directly. It only ever talks to the process that holds the store (`stillHeld`).
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import type { Logger } from '../logger.js';
import { reachableUrl } from '../store/json/data-dir-lock.js';
import { refusedAnswer, serverGoneMessage, unansweredMessage, unavailableAnswer } from './bridge-answers.js';

/** How long a liveness check of the server may take. */
const CHECK_TIMEOUT_MS = 2_000;

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
  /** Waits (at most the shutdown timeout) for the answers still due, then ends the relay. */
  close(reason: string): Promise<void>;
}

/** Whether `err` says the connection was refused: the request never reached the server. */
function refusedConnection(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  return cause?.code === 'ECONNREFUSED';
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
  const server = connectServer();
  /** Requests relayed and not yet answered, by id. */
  const pending = new Map<string | number, JSONRPCRequest>();
  let settled: (() => void) | undefined;
  /** Messages go to the server one after another, in the order the client sent them. */
  let queue: Promise<void> = Promise.resolve();
  /** The last error a send threw (handled by failed(), not by the transport's error callback). */
  let sendFailure: unknown;
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
    // A broken event stream may mean the server stopped: check, and say so if it did. The transport also
    // reports here the failure a send is about to throw; that one is handled where it was sent (failed(),
    // which knows whether the request went out), so the check waits until the send's failure is known.
    transport.onerror = (err) => {
      setImmediate(() => {
        if (err !== sendFailure) void checkServer();
      });
      logger.debug({ err: err.message }, 'MCP bridge: server transport error');
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

  async function relay(message: JSONRPCMessage): Promise<void> {
    if (gone !== undefined) {
      // The server went away while nothing was waiting: say so in this answer, then end.
      if (!isJSONRPCRequest(message)) return;
      await client.send(unavailableAnswer(message, serverGoneMessage(base, options.dataDir, gone, false)));
      return finish(`the server ${gone}`);
    }
    // A message the client sent before it closed is still relayed (close() waits for its answer).
    if (isJSONRPCRequest(message)) pending.set(message.id, message);
    try {
      await server.send(message);
    } catch (err) {
      sendFailure = err;
      return failed(message, err);
    }
  }

  /** A message the server did not take: it refused it at the HTTP level, or it is gone. */
  async function failed(message: JSONRPCMessage, err: unknown): Promise<void> {
    if (!(err instanceof SdkHttpError)) {
      const why = await whyGone();
      if (why === undefined) {
        // The server is there but this exchange failed (a connection reset, an answer that could not be
        // read): this request alone is answered, and the relay goes on.
        logger.info({ server: base, err: (err as Error)?.message }, 'MCP bridge: a message was not relayed');
        if (isJSONRPCRequest(message)) await answer(unavailableAnswer(message, unansweredMessage(base)));
        return;
      }
      logger.info({ server: base, why, err: (err as Error)?.message }, 'MCP bridge: the server is gone');
      // A refused connection took nothing; a connection lost after the request went out may have done it.
      return serverGone(why, refusedConnection(err) ? message : undefined);
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

  /** Why the server can no longer be used (it stopped, or gave up the store), or undefined while it can. */
  async function whyGone(): Promise<string | undefined> {
    const alive = await fetch(new URL(options.pingPath, base), {
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
    })
      .then((res) => res.ok)
      .catch(() => false);
    if (!alive) return 'it no longer answers';
    if (!(await options.stillHeld())) return 'it gave up the store';
    return undefined;
  }

  async function checkServer(): Promise<void> {
    if (ending || gone !== undefined) return;
    const why = await whyGone();
    if (why === undefined) return;
    logger.info({ server: base, why }, 'MCP bridge: the server is gone');
    await serverGone(why);
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
      await server.close().catch(() => undefined);
    },
  };
}
