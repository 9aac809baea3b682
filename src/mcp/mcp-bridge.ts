/**
 * `agent-context mcp` beside a running `agent-context serve` on the same DATA_DIR: instead of refusing (one
 * writer per store), the stdio process relays its client's JSON-RPC messages to the server's /mcp over
 * Streamable HTTP, as the same agent, so every operation lands in the one store and ledger, and tools,
 * resources, prompts and errors are the server's own. The relay keeps no state of the conversation beyond
 * the client's initialize request, which it replays when the server has expired the session.
 *
 * When the server goes away, each request waiting on it gets an answer that says so (an isError tool result,
 * or a JSON-RPC error for other requests), and the bridge ends cleanly; the client's next start opens the
 * store directly.
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
import { AppError } from '../core/errors.js';
import type { Logger } from '../logger.js';
import { reachableUrl } from '../store/data-dir-lock.js';
import { toolFailure } from './tool-results.js';

/** The JSON-RPC error code of a request the bridge could not relay (implementation-defined range). */
const RELAY_FAILED = -32002;
/** How long a liveness check of the server may take. */
const PING_TIMEOUT_MS = 2_000;

export interface BridgeOptions {
  /** The server's base URL, from the DATA_DIR lock (e.g. `http://127.0.0.1:8787`). */
  serverUrl: string;
  /** The MCP endpoint path on it. */
  mcpPath: string;
  /** The API key the bridge presents: AC_API_KEY, else the local agent's. */
  key: string;
  dataDir: string;
  logger: Logger;
  /** The client side: stdio in production. */
  client: Transport;
}

export interface Bridge {
  /** Resolves once the bridge has ended: the client went away, or the server did. */
  ended: Promise<{ reason: string }>;
  close(reason: string): Promise<void>;
}

export async function startMcpBridge(options: BridgeOptions): Promise<Bridge> {
  const { client, logger } = options;
  const base = reachableUrl(options.serverUrl);
  const endpoint = new URL(options.mcpPath, base);
  let server: StreamableHTTPClientTransport = connectServer();
  /** The client's initialize request, replayed when the server has forgotten the session. */
  let initialize: JSONRPCRequest | undefined;
  let protocolVersion: string | undefined;
  /** Requests relayed and not yet answered, by id. */
  const pending = new Map<string | number, JSONRPCRequest>();
  /** Messages go to the server one after another, so that a re-initialization holds the rest back. */
  let queue: Promise<void> = Promise.resolve();
  let reinitCount = 0;
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
    // A broken event stream may mean the server stopped: check, and end if so.
    transport.onerror = (err) => {
      logger.debug({ err }, 'MCP bridge: server transport error');
      void checkServer();
    };
    return transport;
  }

  async function fromServer(message: JSONRPCMessage): Promise<void> {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const id = message.id;
      if (typeof id === 'string' && id.startsWith('bridge-reinit-')) return; // our own initialize
      if (id !== undefined) {
        const request = pending.get(id);
        pending.delete(id);
        if (request?.method === 'initialize' && isJSONRPCResultResponse(message)) {
          protocolVersion = String(message.result.protocolVersion);
          server.setProtocolVersion(protocolVersion);
        }
      }
    }
    await client.send(message).catch(() => undefined);
  }

  /** Starts a new session with the client's own initialize request, before anything else is relayed. */
  async function reinitialize(): Promise<void> {
    if (!initialize) throw new Error('no session to renew');
    await server.close().catch(() => undefined);
    server = connectServer();
    await server.start();
    const id = `bridge-reinit-${++reinitCount}`;
    const answered = new Promise<void>((resolve, reject) => {
      const previous = server.onmessage;
      server.onmessage = (message) => {
        if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && message.id === id) {
          server.onmessage = previous;
          if (isJSONRPCErrorResponse(message)) reject(new Error(message.error.message));
          else resolve();
          return;
        }
        previous?.(message);
      };
    });
    await server.send({ ...initialize, id });
    await answered;
    if (protocolVersion) server.setProtocolVersion(protocolVersion);
    await server.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    logger.info('MCP bridge: the server had expired the session; a new one was started');
  }

  async function relay(message: JSONRPCMessage): Promise<void> {
    if (gone !== undefined) {
      // The server went away while nothing was waiting: say so in this answer, then end.
      if (!isJSONRPCRequest(message)) return;
      await answerUnavailable(message, serverGoneMessage(gone, false));
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
          await reinitialize();
          await server.send(message);
          return;
        } catch (retryErr) {
          return failed(message, retryErr);
        }
      }
      return failed(message, err);
    }
  }

  /** A message the server did not take: its answer is an HTTP error, or the server is gone. */
  async function failed(message: JSONRPCMessage, err: unknown): Promise<void> {
    if (!(err instanceof StreamableHTTPError)) {
      logger.info({ err }, 'MCP bridge: the server cannot be reached');
      return serverGone('it cannot be reached', message);
    }
    if (!isJSONRPCRequest(message)) return;
    pending.delete(message.id);
    const relayed = relayedError(err);
    await client
      .send({
        jsonrpc: '2.0',
        id: message.id,
        error: relayed ?? { code: RELAY_FAILED, message: err.message },
      })
      .catch(() => undefined);
  }

  /**
   * Answers every request still waiting, and ends the bridge. When none was waiting, the bridge stays until
   * the client's next request, so that the person reads why in its answer rather than a closed connection.
   */
  async function serverGone(why: string, refused?: JSONRPCMessage): Promise<void> {
    if (ending || gone !== undefined) return;
    gone = why;
    const waiting = [...pending.values()];
    pending.clear();
    for (const request of waiting) {
      await answerUnavailable(request, serverGoneMessage(why, request !== refused));
    }
    await server.close().catch(() => undefined);
    if (waiting.length > 0) finish(`the server ${why}`);
  }

  function finish(reason: string): void {
    if (ending) return;
    ending = true;
    end({ reason });
  }

  function serverGoneMessage(why: string, inFlight: boolean): string {
    const outcome = inFlight
      ? 'This call may or may not have been done; check before repeating it.'
      : 'This call was not done.';
    return (
      `The agent-context server at ${base}, which this MCP connection went through, has stopped (${why}). ` +
      `${outcome} Restart the agent-context MCP server in your client (or the client itself): it will open ` +
      `the store in ${options.dataDir} directly, or go through a server again if one runs.`
    );
  }

  async function answerUnavailable(message: JSONRPCMessage, text: string): Promise<void> {
    if (!isJSONRPCRequest(message)) return;
    const error = new AppError('unavailable', text);
    const answer: JSONRPCMessage =
      message.method === 'tools/call'
        ? { jsonrpc: '2.0', id: message.id, result: toolFailure(error) }
        : {
            jsonrpc: '2.0',
            id: message.id,
            error: { code: RELAY_FAILED, message: text, data: error.toBody() },
          };
    await client.send(answer).catch(() => undefined);
  }

  async function checkServer(): Promise<void> {
    if (ending || gone !== undefined) return;
    const alive = await fetch(new URL('/api/ac/ping', base), { signal: AbortSignal.timeout(PING_TIMEOUT_MS) })
      .then((res) => res.ok)
      .catch(() => false);
    if (!alive) {
      logger.info({ server: base }, 'MCP bridge: the server no longer answers');
      await serverGone('it no longer answers');
    }
  }

  client.onmessage = (message) => {
    queue = queue.then(() => relay(message));
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
      await queue.catch(() => undefined);
      await server.terminateSession().catch(() => undefined);
      await server.close().catch(() => undefined);
    },
  };
}

/** The JSON-RPC error the server sent with an HTTP error status, when its body holds one. */
function relayedError(
  err: StreamableHTTPError,
): { code: number; message: string; data?: unknown } | undefined {
  const text = err.message.replace(/^Streamable HTTP error: Error POSTing to endpoint: /u, '');
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (typeof body.error?.code === 'number' && typeof body.error.message === 'string') {
      return {
        code: body.error.code,
        message: body.error.message,
        ...(body.error.data === undefined ? {} : { data: body.error.data }),
      };
    }
  } catch {
    // not JSON: the caller words it
  }
  return undefined;
}
