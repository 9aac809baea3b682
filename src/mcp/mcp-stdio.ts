/**
 * `agent-context mcp`: MCP over stdio for desktop clients. stdout carries only the protocol; logs go to
 * stderr. The key is AC_API_KEY, or the local agent's (unlimited plan; a JSON file store only: on a shared
 * PostgreSQL database AC_API_KEY is required). Three ways to serve:
 * - directly on the store in DATA_DIR (the usual case), or on the database of DATABASE_URL;
 * - through a running `agent-context serve` that holds the store (see mcp-bridge.ts);
 * - unavailable: when the store cannot be used (a bad configuration, a data directory it cannot write, a
 *   damaged store, a key this store does not know, another stdio server holding it) it still answers
 *   initialize and lists its tools, and every call returns an isError result saying what is wrong and what
 *   to do, so the person sees it in their client instead of "Connection closed".
 * It exits cleanly (0), store flushed and DATA_DIR lock released, when stdin closes or on SIGTERM/SIGINT,
 * after the requests in flight have been answered or AC_SHUTDOWN_TIMEOUT_MS has passed.
 */
import { type Config, storePlace } from '../config.js';
import type { Core } from '../core/core.js';
import { AppError } from '../core/errors.js';
import type { Limits } from '../core/limits.js';
import type { Operation } from '../core/operation-table.js';
import { ensureLocalAgent, readLocalAgentKey } from '../local-agent.js';
import type { Logger } from '../logger.js';
import { MCP_PATH, PING_PATH } from '../server-paths.js';
import { DataDirLockedError, type LockHolder, readLockHolder } from '../store/json/data-dir-lock.js';
import { dataDirAccessError, StoreOpenError } from '../store/store-open-error.js';
import { createMcpServer } from './create-mcp-server.js';
import { startMcpBridge } from './mcp-bridge.js';
import { exitWhenFlushed, onClientGone, serve, stdioWire } from './stdio-lifecycle.js';

/** What the stdio server needs of the service (src/service.ts builds it; this face does not import it). */
export interface StdioService {
  core: Core;
  operations: readonly Operation[];
  logger: Logger;
  close(): Promise<void>;
}

/** How the stdio server opens the service (the composition root, service.ts, builds both). */
export interface OpenService {
  /** The service on the configured store (`openService`). */
  open(config: Readonly<Config>): Promise<StdioService>;
  /** The service over a store that cannot serve, every call failing with `message` (`openUnavailableService`). */
  unavailable(message: string, limits: Limits | undefined): StdioService;
}

/**
 * Runs the stdio server. `config` is the parsed configuration, or the ConfigError that stopped it (shown in
 * every tool result).
 */
export async function runStdioServer(
  config: Readonly<Config> | Error,
  logger: Logger,
  open: OpenService,
): Promise<void> {
  if (config instanceof Error) return serveUnavailable(open, config.message, undefined, logger);
  let service: StdioService;
  try {
    service = await openServiceOrServer(config, open);
  } catch (err) {
    if (err instanceof DataDirLockedError && err.holder.url) {
      return bridgeTo(open, err.holder, config, logger);
    }
    return serveUnavailable(open, cannotServe(err, config, logger), config, logger);
  }
  let key: string;
  try {
    key = config.apiKey ?? (await localAgentKey(service, config));
    if (config.apiKey) await service.core.accounts.authenticate(config.apiKey);
  } catch (err) {
    await service.close().catch(() => undefined);
    const unknownKey = err instanceof AppError && err.code === 'unauthorized';
    return serveUnavailable(
      open,
      unknownKey ? unknownKeySentence(config) : cannotServe(err, config, logger),
      config,
      logger,
    );
  }
  await serve(
    (era) => createMcpServer({ ...service, keyOf: () => key }, era),
    config.shutdownTimeoutMs,
    logger,
    () => service.close(),
  );
  logger.info(
    { store: storePlace(config), localAgent: config.apiKey === undefined },
    'MCP stdio server ready',
  );
}

/**
 * The local agent's key, made on first use in DATA_DIR. A shared database has no local agent: every person
 * on it acts as a registered agent, so AC_API_KEY is required there.
 */
async function localAgentKey(service: StdioService, config: Readonly<Config>): Promise<string> {
  if (config.database) {
    throw new AppError(
      'unavailable',
      `AC_API_KEY is not set, and ${storePlace(config)} is shared, so it has no local agent. Set AC_API_KEY ` +
        "in the MCP client's configuration to your agent key (register one with POST /api/ac/register on a " +
        'server of this database), or remove DATABASE_URL to use a JSON file store of your own.',
    );
  }
  return ensureLocalAgent(service.core, config.dataDir);
}

function unknownKeySentence(config: Readonly<Config>): string {
  return config.database
    ? `AC_API_KEY is not a key of ${storePlace(config)}. Set it to a key registered there (POST ` +
        '/api/ac/register on a server of this database), or set DATABASE_URL to the database the key belongs to.'
    : `AC_API_KEY is not a key of ${storePlace(config)}. Set it to a key registered in this store (or remove ` +
        'it to use the local agent), or set DATA_DIR to the store the key belongs to.';
}

/** How long `mcp` waits for a server that is starting on the store to say where it listens. */
const SERVER_START_WAIT_MS = 15_000;

/**
 * Opens the store; when a server holds it but is still starting (its lock has no URL yet: it replays the
 * journal before it listens), waits until it says where it listens, and throws the lock error with that
 * URL, or opens the store if the server went away meanwhile.
 */
async function openServiceOrServer(config: Readonly<Config>, open: OpenService): Promise<StdioService> {
  const deadline = Date.now() + SERVER_START_WAIT_MS;
  for (;;) {
    try {
      return await open.open(config);
    } catch (err) {
      if (!(err instanceof DataDirLockedError) || err.holder.url || err.holder.command !== 'serve') throw err;
      if (Date.now() > deadline) throw err;
      const holder = await readLockHolder(config.dataDir);
      if (holder?.url && holder.pid === err.holder.pid) throw new DataDirLockedError(err.dataDir, holder);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** The sentence for a store that cannot be opened or used: a known condition as it is, else the log has it. */
function cannotServe(err: unknown, config: Readonly<Config>, logger: Logger): string {
  if (err instanceof StoreOpenError || err instanceof AppError) return err.message;
  const access = config.database ? undefined : dataDirAccessError(config.dataDir, err);
  if (access) return access.message;
  logger.error({ err }, 'the store could not be opened');
  const place = storePlace(config);
  return (
    `${place[0]?.toUpperCase()}${place.slice(1)} could not be opened: ${(err as Error)?.message ?? String(err)}. ` +
    'The server log (stderr) has the details.'
  );
}

/**
 * The stdio server over a store that cannot serve: the same tools, resources and prompt, every call
 * answered with `message` (code `unavailable`). Logged once to stderr, without a stack.
 */
async function serveUnavailable(
  open: OpenService,
  message: string,
  config: Readonly<Config> | undefined,
  logger: Logger,
): Promise<void> {
  logger.error(`cannot serve: ${message}`);
  const { core, operations } = open.unavailable(message, config?.limits);
  // Any key: the store refuses before a key is looked at, and a missing key would be the wrong message.
  const keyOf = () => config?.apiKey ?? 'local-agent';
  await serve(
    (era) => createMcpServer({ core, operations, logger, keyOf }, era),
    config?.shutdownTimeoutMs ?? 10_000,
    logger,
    async () => undefined,
  );
}

/** Relays the client to the server that holds the store, as the same agent. */
async function bridgeTo(
  open: OpenService,
  holder: LockHolder,
  config: Readonly<Config>,
  logger: Logger,
): Promise<void> {
  const serverUrl = holder.url as string;
  let key: string | undefined;
  try {
    key = config.apiKey ?? (await readLocalAgentKey(config.dataDir));
  } catch (err) {
    return serveUnavailable(open, cannotServe(err, config, logger), config, logger);
  }
  if (key === undefined) {
    return serveUnavailable(
      open,
      `The store in ${config.dataDir} is held by the agent-context server at ${serverUrl}, which has no local ` +
        'agent (a server listening on a loopback address makes one at start). Set AC_API_KEY to a key of that ' +
        'server, or stop it so that this server opens the store itself.',
      config,
      logger,
    );
  }
  const bridge = await startMcpBridge({
    serverUrl,
    mcpPath: MCP_PATH,
    pingPath: PING_PATH,
    key,
    dataDir: config.dataDir,
    stillHeld: async () => {
      const now = await readLockHolder(config.dataDir);
      return now?.pid === holder.pid && now.url === holder.url;
    },
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    logger,
    client: stdioWire(),
  });
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'MCP bridge ending');
    // However the server behaves, the process ends within the shutdown timeout and a little more.
    setTimeout(() => exitWhenFlushed(0), config.shutdownTimeoutMs + 3_000).unref();
    void bridge.close(reason).then(() => exitWhenFlushed(0));
  };
  onClientGone(stop);
  void bridge.ended.then(({ reason }) => stop(reason));
}
