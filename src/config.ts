/**
 * Configuration, parsed once with zod from the environment and command-line flags (flags win) into a
 * frozen Config. Nothing else reads process.env. A bad value stops start-up with a message naming it.
 */
import path from 'node:path';
import envPaths from 'env-paths';
import type { z } from 'zod';
import { EnvSchema, type TrustProxySetting } from './config-env.js';
import { DEFAULT_LIMITS, type Limits } from './core/limits.js';
import type { LiveConfig } from './live/live-config.js';
import { PROVIDERS } from './live/provider-list.js';

export {
  PROVIDER_VARIABLES,
  type TrustProxySetting,
  UPSTREAM_URL_VARIABLES,
} from './config-env.js';

export interface DatabaseConfig {
  url: string;
  /** The database for logs and messages: host, port and database, never the password. */
  label: string;
  /** Connections in this instance's pool: the instances' pools together must stay under max_connections. */
  poolMax: number;
  statementTimeoutMs: number;
}

/** The database's address for a log line: host, port and database, never the user's password. */
export function databaseLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `postgresql://${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`;
  } catch {
    return 'postgresql://(unparsable URL)';
  }
}

/** Where the store is, in a sentence: "the database at …" or "the store in <dir>". */
export function storePlace(config: Pick<Config, 'database' | 'dataDir'>): string {
  return config.database ? `the database at ${config.database.label}` : `the store in ${config.dataDir}`;
}

/** Flags that mirror environment variables; a flag given wins over the variable. */
export interface ConfigFlags {
  host?: string;
  port?: string;
  dataDir?: string;
  /**
   * The data directory when nothing else says where the store is (no --data-dir, DATA_DIR or DATABASE_URL):
   * `npm start` passes the checkout's `data/`, so that the environment still decides when it is set.
   */
  defaultDataDir?: string;
  publicUrl?: string;
}

export interface Config {
  host: string;
  port: number;
  /** Absolute. */
  dataDir: string;
  /** Where dataDir came from: a flag, DATA_DIR, or the default (the user's data directory). */
  dataDirFrom: 'flag' | 'env' | 'default';
  /** The PostgreSQL store (DATABASE_URL), for many instances on one database; the JSON file store if unset. */
  database: DatabaseConfig | undefined;
  publicUrl: string | undefined;
  /**
   * OAuth 2.1 for remote MCP clients (src/oauth): on when the service has a public URL that is https (or on
   * loopback) and AC_OAUTH is not `off`; undefined when off.
   */
  oauth: OAuthConfig | undefined;
  /** Why OAuth is off although AC_OAUTH was not set to off, for the start-up log. */
  oauthOffReason: string | undefined;
  /** The key the stdio MCP server acts with; without it, a local agent of its own. */
  apiKey: string | undefined;
  adminToken: string | undefined;
  /** The bearer token GET /metrics needs; without it /metrics is not served. */
  metricsToken: string | undefined;
  /**
   * Semantic search's model: an OpenAI-compatible embeddings endpoint (AC_EMBEDDINGS_URL), else the
   * in-process model (`local`, the default); undefined with AC_EMBEDDINGS=off (lexical search only).
   */
  embeddings: EmbeddingsConfig | 'local' | undefined;
  logLevel: string;
  bodyMaxBytes: number;
  limits: Limits;
  live: LiveConfig;
  rateLimit: RateLimitConfig;
  /** Express's `trust proxy` setting (AC_TRUST_PROXY); `false` (unset) trusts no proxy. */
  trustProxy: TrustProxySetting;
  /** Origins allowed to call from a browser; empty: CORS off. */
  corsOrigins: readonly string[];
  /** `auto`: readable when stderr is a terminal, JSON otherwise. */
  logFormat: 'auto' | 'json' | 'pretty';
  /** How long a shutdown waits for requests in flight before it closes their connections. */
  shutdownTimeoutMs: number;
  /** A client must send its request headers within this time, and the whole request within the next. */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export interface OAuthConfig {
  /** The issuer: the public URL, no trailing slash. */
  issuer: string;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** Tests only: client metadata documents from loopback (accepted only with a loopback issuer). */
  cimdAllowLoopback: boolean;
}

export interface EmbeddingsConfig {
  /** POST {url}/v1/embeddings, unless the URL already ends with /embeddings. */
  url: string;
  model: string;
  apiKey: string | undefined;
}

export interface RateLimitConfig {
  /** `AC_RATE_LIMIT=off` turns every limit off, the registration limits included. */
  enabled: boolean;
  perKeyPerMinute: number;
  unauthenticatedPerMinute: number;
  registerPerHourPerAddress: number;
  registerPerHourPerDomain: number;
}

export class ConfigError extends Error {}

/**
 * The user's data directory for the platform, where a store lives unless DATA_DIR says otherwise:
 * `$XDG_DATA_HOME/agent-context` or `~/.local/share/agent-context` on Linux, `~/Library/Application
 * Support/agent-context` on macOS, `%LOCALAPPDATA%\agent-context\Data` on Windows (env-paths' rules).
 * Never the working directory, which a desktop client may set to `/`.
 */
export function defaultDataDir(): string {
  return envPaths('agent-context', { suffix: '' }).data;
}

export function loadConfig(env: NodeJS.ProcessEnv, flags: ConfigFlags = {}): Readonly<Config> {
  const merged = {
    ...env,
    ...(flags.host === undefined ? {} : { HOST: flags.host }),
    ...(flags.port === undefined ? {} : { PORT: flags.port }),
    ...(flags.dataDir === undefined ? {} : { DATA_DIR: flags.dataDir }),
    ...(flags.publicUrl === undefined ? {} : { PUBLIC_URL: flags.publicUrl }),
  };
  const parsed = EnvSchema.safeParse(merged);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const name = issue.path.join('.');
      return `  ${name}=${JSON.stringify(merged[name as keyof typeof merged] ?? '')}: ${issue.message}`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.DATABASE_URL !== undefined && e.DATA_DIR !== undefined) {
    throw new ConfigError(
      `Invalid configuration:\n  DATABASE_URL and ${flags.dataDir !== undefined ? '--data-dir' : 'DATA_DIR'} are ` +
        'both set: the store is either PostgreSQL (DATABASE_URL) or a JSON file store in a data directory. ' +
        `Drop ${flags.dataDir !== undefined ? '--data-dir' : 'DATA_DIR'} to use PostgreSQL, or DATABASE_URL to use the files.`,
    );
  }
  if (e.PUBLIC_URL !== undefined && e.AC_PUBLIC_URL !== undefined && e.PUBLIC_URL !== e.AC_PUBLIC_URL) {
    throw new ConfigError(
      `Invalid configuration:\n  PUBLIC_URL and AC_PUBLIC_URL are both set and differ (${e.PUBLIC_URL}, ${e.AC_PUBLIC_URL}): set one of them.`,
    );
  }
  const publicUrl = e.AC_PUBLIC_URL ?? e.PUBLIC_URL;
  const { oauth, oauthOffReason } = oauthConfig(e, publicUrl);
  return Object.freeze({
    host: e.HOST,
    port: e.PORT,
    dataDir: path.resolve(e.DATA_DIR ?? flags.defaultDataDir ?? defaultDataDir()),
    dataDirFrom:
      flags.dataDir !== undefined
        ? 'flag'
        : e.DATA_DIR !== undefined
          ? 'env'
          : flags.defaultDataDir !== undefined
            ? 'flag'
            : 'default',
    database:
      e.DATABASE_URL === undefined
        ? undefined
        : Object.freeze({
            url: e.DATABASE_URL,
            label: databaseLabel(e.DATABASE_URL),
            poolMax: e.AC_DB_POOL_MAX,
            statementTimeoutMs: e.AC_DB_STATEMENT_TIMEOUT_MS,
          }),
    publicUrl,
    oauth,
    oauthOffReason,
    apiKey: e.AC_API_KEY,
    adminToken: e.AC_ADMIN_TOKEN,
    metricsToken: e.AC_METRICS_TOKEN,
    embeddings:
      e.AC_EMBEDDINGS === 'off'
        ? undefined
        : e.AC_EMBEDDINGS_URL === undefined
          ? 'local'
          : { url: e.AC_EMBEDDINGS_URL, model: e.AC_EMBEDDINGS_MODEL, apiKey: e.AC_EMBEDDINGS_API_KEY },
    logLevel: e.AC_LOG_LEVEL,
    bodyMaxBytes: e.AC_BODY_MAX_BYTES,
    limits: Object.freeze({
      ...DEFAULT_LIMITS,
      memoryKeyMaxChars: e.AC_MEMORY_KEY_MAX_CHARS,
      memoryValueMaxBytes: e.AC_MEMORY_VALUE_MAX_BYTES,
      metadataMaxBytes: e.AC_METADATA_MAX_BYTES,
      memoriesPerAgent: e.AC_MEMORIES_PER_AGENT,
      importMaxBytes: e.AC_IMPORT_MAX_BYTES,
      semanticMinSimilarity: e.AC_EMBEDDINGS_MIN_SIMILARITY,
      memoryHistoryVersions: e.AC_MEMORY_HISTORY ?? DEFAULT_LIMITS.memoryHistoryVersions,
      memoryHistoryRetentionSeconds:
        e.AC_MEMORY_HISTORY_RETENTION ?? DEFAULT_LIMITS.memoryHistoryRetentionSeconds,
      ...(Object.keys(e.AC_MEMORY_TTL).length > 0
        ? { memoryTtlSeconds: Object.freeze(e.AC_MEMORY_TTL) }
        : {}),
      queryMaxChars: e.AC_QUERY_MAX_CHARS,
      ...(e.AC_DAILY_SPEND_LIMIT_CENTS === undefined
        ? {}
        : { dailySpendCents: e.AC_DAILY_SPEND_LIMIT_CENTS }),
      ...(e.AC_UNLIMITED_DAILY_SPEND_LIMIT_CENTS === undefined
        ? {}
        : { unlimitedDailySpendCents: e.AC_UNLIMITED_DAILY_SPEND_LIMIT_CENTS }),
    }),
    rateLimit: Object.freeze({
      enabled: e.AC_RATE_LIMIT === 'on',
      perKeyPerMinute: e.AC_RATE_LIMIT_PER_KEY_PER_MINUTE,
      unauthenticatedPerMinute: e.AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE,
      registerPerHourPerAddress: e.AC_REGISTER_PER_HOUR_PER_ADDRESS,
      registerPerHourPerDomain: e.AC_REGISTER_PER_HOUR_PER_DOMAIN,
    }),
    trustProxy: e.AC_TRUST_PROXY,
    corsOrigins: Object.freeze(e.AC_CORS_ORIGINS),
    logFormat: e.AC_LOG_FORMAT,
    shutdownTimeoutMs: e.AC_SHUTDOWN_TIMEOUT_MS,
    headersTimeoutMs: Math.min(e.AC_HEADERS_TIMEOUT_MS, e.AC_REQUEST_TIMEOUT_MS),
    requestTimeoutMs: e.AC_REQUEST_TIMEOUT_MS,
    live: Object.freeze(liveConfig(e)),
  });
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** HOST values that bind to loopback only. */
const LOOPBACK_BINDS = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * OAuth is on by default wherever it can be: the issuer is the public URL, which OAuth 2.1 wants on https
 * (or on loopback, for a machine's own clients and tests). Asked for explicitly (AC_OAUTH=on) where it
 * cannot be, the start stops with what to set.
 */
function oauthConfig(
  e: z.output<typeof EnvSchema>,
  publicUrl: string | undefined,
): { oauth: OAuthConfig | undefined; oauthOffReason: string | undefined } {
  const loopbackIssuer = publicUrl !== undefined && LOOPBACK_HOSTS.has(new URL(publicUrl).hostname);
  if (e.AC_OAUTH_CIMD_ALLOW_LOOPBACK === 'on' && !(loopbackIssuer && LOOPBACK_BINDS.has(e.HOST))) {
    throw new ConfigError(
      'Invalid configuration:\n  AC_OAUTH_CIMD_ALLOW_LOOPBACK=on is a test setting: it is accepted only when ' +
        'AC_PUBLIC_URL is a loopback address and the server listens on loopback (HOST). Remove it.',
    );
  }
  if (e.AC_OAUTH === 'off') return { oauth: undefined, oauthOffReason: undefined };
  let reason: string | undefined;
  if (publicUrl === undefined) reason = 'AC_PUBLIC_URL is not set (it is the issuer)';
  else if (!publicUrl.startsWith('https://') && !loopbackIssuer)
    reason = `AC_PUBLIC_URL (${publicUrl}) is not https: put HTTPS in front and set the https URL`;
  else if (new URL(publicUrl).pathname !== '/')
    reason = `AC_PUBLIC_URL (${publicUrl}) has a path: the authorization server's endpoints are at the host's root`;
  if (reason !== undefined) {
    if (e.AC_OAUTH === 'on')
      throw new ConfigError(`Invalid configuration:\n  AC_OAUTH=on, but ${reason}; or set AC_OAUTH=off.`);
    return { oauth: undefined, oauthOffReason: reason };
  }
  return {
    oauth: Object.freeze({
      issuer: publicUrl as string,
      accessTokenTtlSeconds: e.AC_OAUTH_ACCESS_TOKEN_TTL,
      refreshTokenTtlSeconds: e.AC_OAUTH_REFRESH_TOKEN_TTL,
      cimdAllowLoopback: e.AC_OAUTH_CIMD_ALLOW_LOOPBACK === 'on',
    }),
    oauthOffReason: undefined,
  };
}

/**
 * The live part of Config: each provider's base URLs under its descriptor's keys, its API key under its id,
 * and the order of each chain whose AC_*_PROVIDERS is set.
 */
function liveConfig(e: z.output<typeof EnvSchema>): LiveConfig {
  const values: Readonly<Record<string, unknown>> = e;
  const urls: Record<string, string> = {};
  const apiKeys: Record<string, string> = {};
  for (const provider of PROVIDERS) {
    for (const [key, url] of Object.entries(provider.urls)) {
      const value = values[url.variable];
      if (typeof value === 'string') urls[key] = value;
    }
    const apiKey = provider.apiKey && values[provider.apiKey.variable];
    if (typeof apiKey === 'string') apiKeys[provider.id] = apiKey;
  }
  return {
    userAgent: 'agent-context/1.0 (+https://github.com/agent-context/agent-context)',
    timeoutMs: e.AC_UPSTREAM_TIMEOUT_MS,
    instances: e.AC_INSTANCES,
    urls,
    providers: {
      ...(e.AC_WEATHER_PROVIDERS && { weather: e.AC_WEATHER_PROVIDERS }),
      ...(e.AC_PRICE_PROVIDERS && { price: e.AC_PRICE_PROVIDERS }),
      ...(e.AC_NEWS_PROVIDERS && { news: e.AC_NEWS_PROVIDERS }),
      ...(e.AC_SEARCH_PROVIDERS && { search: e.AC_SEARCH_PROVIDERS }),
      ...(e.AC_GEOCODING_PROVIDERS && { geocoding: e.AC_GEOCODING_PROVIDERS }),
    },
    apiKeys,
  };
}
