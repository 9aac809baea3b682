/**
 * MCP over Streamable HTTP at /mcp, on the same Express app (and so the same core and ledger) as REST, served
 * by the SDK's `createMcpHandler`: both protocol eras on one endpoint, every request on its own, with no
 * protocol session (2026-07-28 has none; a 2025 `initialize` is answered statelessly), so that any instance
 * behind a balancer can answer any request, on the JSON store as on PostgreSQL. What every request passes
 * through first is here: Host- and Origin-header (DNS-rebinding) checks when the server is bound to a loopback
 * address; the key from X-API-Key or Authorization: Bearer, looked up once per request exactly as for REST,
 * or an OAuth access token (mcp-auth.ts: with OAuth on, a request without a credential is challenged and a
 * token's scopes are checked; with it off, discovery works without a key), handed to the handler as its auth
 * info; a body the JSON parser refused,
 * answered as a JSON-RPC error. The SDK checks the rest: the 2026-07-28 envelope and headers, content type.
 */
import { hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import { type AuthInfo, createMcpHandler } from '@modelcontextprotocol/server';
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from 'express';
import { createMcpServer, type McpServerDeps } from '../mcp/create-mcp-server.js';
import { JSON_RPC, jsonRpcCodeOf } from '../mcp/json-rpc-codes.js';
import { logSdkError } from '../mcp/sdk-errors.js';
import { MCP_PATH } from '../server-paths.js';
import { httpError } from './error-handler.js';
import { httpStatusOf } from './http-status.js';
import { jsonTextOf } from './json-body.js';
import { challenge, covers, type McpAuthOptions, scopeNeeded, toolScopes } from './mcp-auth.js';
import { identify } from './request-identity.js';
import { requestLogger } from './request-log.js';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export interface McpHttp {
  /** Ends every exchange still open (at shutdown, after the drain). */
  close(): Promise<void>;
}

export interface McpHttpOptions {
  /** The address the server listens on: loopback turns on Host- and Origin-header checks. */
  host: string;
  /** The public base URL, whose host name is also allowed by those checks. */
  publicUrl?: string | undefined;
  /** The largest body the SDK reads itself (one this server's JSON parser did not read: not JSON). */
  bodyMaxBytes: number;
  /** OAuth is on: every request needs a credential, and a token's scopes are checked (mcp-auth.ts). */
  oauth?: McpAuthOptions;
}

/** A JSON-RPC error answered by the endpoint itself, before the MCP handler: `id` is null. */
function rpcError(res: Response, status: number, code: number, message: string, data?: unknown): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null });
}

/** The SDK's Node guards (which answer 403 themselves when they refuse) as one Express middleware. */
function rebindingGuard(allowed: string[]): RequestHandler {
  const host = hostHeaderValidation(allowed);
  const origin = originValidation(allowed);
  return (req, res, next) => {
    if (host(req, res) && origin(req, res)) next();
  };
}

/** `req` with its body as `text`, read as a Node stream is (the JSON parser has already read the stream). */
function bodyAsText(req: Request, text: string) {
  return {
    method: req.method,
    url: req.url,
    headers: req.headers,
    ...((req as { auth?: AuthInfo }).auth ? { auth: (req as { auth?: AuthInfo }).auth } : {}),
    async *[Symbol.asyncIterator]() {
      yield text;
    },
  };
}

export function mountMcpHttp(
  app: Express,
  deps: Omit<McpServerDeps, 'keyOf'>,
  options: McpHttpOptions,
): McpHttp {
  if (LOOPBACK.has(options.host)) {
    const allowed = ['127.0.0.1', 'localhost', '[::1]'];
    if (options.publicUrl) allowed.push(new URL(options.publicUrl).hostname);
    app.use(MCP_PATH, rebindingGuard(allowed));
  }

  const keyOf: McpServerDeps['keyOf'] = (extra) => extra.http?.authInfo?.token;
  // The OAuth client whose token the request carried: the ledger entry of a charge names it.
  const spenderOf: McpServerDeps['spenderOf'] = (extra) => {
    const client = extra.http?.authInfo?.extra?.oauthClient;
    return typeof client === 'string' ? client : undefined;
  };
  const scopes = toolScopes(deps.operations);
  // The account was found at the edge (identify): a tool call does not look the key up again.
  const knownAgent: McpServerDeps['knownAgent'] = (extra) => {
    const agentId = extra.http?.authInfo?.extra?.agentId;
    return typeof agentId === 'string' ? agentId : undefined;
  };
  const onerror = (err: Error) => logSdkError(deps.logger, err, 'MCP over HTTP');
  const handler = createMcpHandler(
    ({ era }) => createMcpServer({ ...deps, keyOf, knownAgent, spenderOf }, era),
    {
      legacy: 'stateless',
      onerror,
      maxRequestBodySize: options.bodyMaxBytes,
    },
  );
  const serve = toNodeHandler(handler, { onerror, maxRequestBodySize: options.bodyMaxBytes });

  app.all(MCP_PATH, async (req, res) => {
    const { key, account, error, token } = await identify(req, deps.core);
    if (error?.code === 'invalid_input') {
      rpcError(res, 400, JSON_RPC.invalidRequest, error.message); // two headers with different keys
      return;
    }
    if (options.oauth && !account) {
      const refused =
        key === undefined ? undefined : { code: 'invalid_token' as const, description: error?.message ?? '' };
      res.set('WWW-Authenticate', challenge(options.oauth, refused));
      rpcError(
        res,
        401,
        JSON_RPC.invalidRequest,
        key === undefined
          ? 'This server needs a credential: sign in through OAuth (the WWW-Authenticate header says where), or send an API key as X-API-Key or Authorization: Bearer.'
          : (error?.message ?? 'The credential was refused.'),
      );
      return;
    }
    if (options.oauth && token) {
      const needed = scopeNeeded(req.body, scopes);
      if (!covers(token.scopes, needed)) {
        const description = `This token was allowed ${token.scopes.join(' ') || 'no scope'}; the call needs ${needed}. Ask the person to allow ${needed} (sign in again with scope ${needed}).`;
        res.set('WWW-Authenticate', challenge(options.oauth, { code: 'insufficient_scope', description }));
        rpcError(res, 403, JSON_RPC.invalidRequest, description, {
          code: 'insufficient_scope',
          scope: needed,
        });
        return;
      }
    }
    // toNodeHandler hands req.auth to the handler, and so to every tool, as its auth info.
    if (key !== undefined) {
      const extra = {
        requestId: res.locals.requestId as string | undefined,
        agentId: account?.id,
        ...(token ? { oauthClient: token.clientId } : {}),
      };
      (req as Request & { auth?: AuthInfo }).auth = {
        token: key,
        clientId: token?.clientId ?? 'agent-context',
        scopes: token?.scopes ?? [],
        ...(token ? { expiresAt: token.expiresAt } : {}),
        extra,
      };
    }
    // The handler gets the body as the text it came as (it parses it again): handing it the parsed value
    // would make the SDK serialize it, which overflows the stack on arguments nested 100,000 deep.
    const text = jsonTextOf(req);
    await serve(text === undefined ? req : bodyAsText(req, text), res);
  });

  // A body the JSON parser refused (malformed, too large, not JSON) is answered as a JSON-RPC error here,
  // with the same sentence REST gives, rather than as a REST error body.
  const answerAsJsonRpc: ErrorRequestHandler = (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const error = httpError(err);
    if (error.code === 'internal') {
      requestLogger(res, deps.logger).error(
        { err: error.cause ?? err, method: req.method, path: req.path },
        'MCP request failed',
      );
    }
    rpcError(res, httpStatusOf(error), jsonRpcCodeOf(error), error.message, error.toBody());
  };
  app.use(MCP_PATH, answerAsJsonRpc);

  return { close: () => handler.close() };
}
