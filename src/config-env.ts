/**
 * What each environment variable accepts: the zod schema that `loadConfig` (config.ts) parses the environment
 * and flags with, and the field parsers it is built from (ports, URLs, AC_TRUST_PROXY, the providers'
 * variables, read from their descriptors).
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { DEFAULT_LIMITS } from './core/limits.js';
import { MAX_TTL_SECONDS, MEMORY_TYPES, type MemoryType } from './core/model.js';
import { PROVIDERS } from './live/provider-list.js';
import { PROVIDER_IDS } from './live/providers.js';

/** `true`, `false`, a hop count, or proxy addresses and subnets, as Express's `trust proxy` takes them. */
export type TrustProxySetting = boolean | number | readonly string[];

const Port = z.coerce.number().int().min(0).max(65_535);
const PositiveInt = z.coerce.number().int().min(1);
/** A base URL: only its scheme, host and port are used. */
const BaseUrl = z.url({ protocol: /^https?$/ }).transform((value) => new URL(value).origin);
const Optional = z
  .string()
  .optional()
  .transform((value) => (value === '' ? undefined : value));

/** Express's named address ranges, accepted in AC_TRUST_PROXY's list. */
const TRUST_PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** One entry of AC_TRUST_PROXY's list: an address, a subnet (`10.0.0.0/8`, `fd00::/8`) or a named range. */
function isTrustProxyEntry(entry: string): boolean {
  if (TRUST_PROXY_NAMES.includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/u.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

/**
 * Express's `trust proxy` setting: `true` (trust every hop: only behind a proxy that overwrites
 * X-Forwarded-For), `false`, a hop count, or a comma-separated list of the proxies' addresses or subnets.
 */
const TrustProxy = Optional.transform((value, ctx): TrustProxySetting => {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/u.test(value)) return Number(value);
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = entries.filter((entry) => !isTrustProxyEntry(entry));
  if (entries.length === 0 || bad.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message:
        `must be true, false, a hop count (e.g. 1) or a comma-separated list of proxy addresses or subnets ` +
        `(e.g. 10.0.0.1,192.168.0.0/16, or ${TRUST_PROXY_NAMES.join(', ')})` +
        (bad.length > 0 ? `; not an address or subnet: ${bad.join(', ')}` : ''),
    });
    return z.NEVER;
  }
  return entries;
});

/**
 * The environment variable that overrides each upstream's base URL, by key of LiveConfig.urls: those with
 * a default, as the provider descriptors declare them.
 */
export const UPSTREAM_URL_VARIABLES: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    PROVIDERS.flatMap((provider) =>
      Object.entries(provider.urls)
        .filter(([, url]) => url.default !== undefined)
        .map(([key, url]) => [key, url.variable]),
    ),
  ),
);

/**
 * The variables each provider descriptor declares: its API key (optional; empty is unset) and its base
 * URLs (http or https; defaulting to the public host, or optional when the descriptor gives none).
 */
function providerVariables() {
  const shape: Record<
    string,
    typeof Optional | z.ZodOptional<typeof BaseUrl> | z.ZodDefault<typeof BaseUrl>
  > = {};
  for (const { apiKey } of PROVIDERS) if (apiKey) shape[apiKey.variable] = Optional;
  for (const provider of PROVIDERS) {
    for (const url of Object.values(provider.urls)) {
      shape[url.variable] = url.default === undefined ? BaseUrl.optional() : BaseUrl.default(url.default);
    }
  }
  return shape;
}

const PROVIDER_SHAPE = providerVariables();

/** Every variable the provider descriptors declare (base URLs and API keys), all read by the configuration. */
export const PROVIDER_VARIABLES: readonly string[] = Object.freeze(Object.keys(PROVIDER_SHAPE));

const TTL_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `30d`, `12h`, `90m`, `3600s` in seconds; undefined for anything else. */
function durationSeconds(text: string): number | undefined {
  const match = /^(\d+)([smhd])$/u.exec(text);
  return match ? Number(match[1]) * (TTL_UNITS[match[2] as string] as number) : undefined;
}

/** A duration variable (`30d`, `12h`, `90m`, `3600s`), in seconds, from 1 s to ten years. */
const Duration = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const seconds = durationSeconds(value);
    if (seconds === undefined || seconds < 1 || seconds > MAX_TTL_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        message: `"${value}" is not a duration like 30d, 12h, 90m or 3600s (at most ten years)`,
      });
      return z.NEVER;
    }
    return seconds;
  });

/**
 * AC_MEMORY_TTL: default times to live by memory type, e.g. `context=30d,workflow=12h` (units s, m, h, d);
 * a type not listed never expires by default.
 */
const MemoryTtl = Optional.transform((value, ctx) => {
  const out: Partial<Record<MemoryType, number>> = {};
  for (const part of (value ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [type, duration] = part.split('=') as [MemoryType, string | undefined];
    const seconds = duration === undefined ? undefined : durationSeconds(duration);
    if (!MEMORY_TYPES.includes(type) || seconds === undefined || seconds < 1 || seconds > MAX_TTL_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        message:
          `"${part}" is not TYPE=DURATION with TYPE one of ${MEMORY_TYPES.join(', ')} and DURATION like 30d, ` +
          '12h, 90m or 3600s (at most ten years)',
      });
      return z.NEVER;
    }
    out[type] = seconds;
  }
  return out;
});

/** A comma-separated, ordered list of provider ids of one kind, e.g. `open-meteo,wttr`. */
function providerList(ids: readonly string[]) {
  return z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean),
    )
    .pipe(
      z
        .array(
          z.enum(ids as [string, ...string[]], { message: `each provider must be one of ${ids.join(', ')}` }),
        )
        .min(1),
    )
    .optional();
}

export const EnvSchema = z.object({
  AC_WEATHER_PROVIDERS: providerList(PROVIDER_IDS.weather),
  AC_PRICE_PROVIDERS: providerList(PROVIDER_IDS.price),
  AC_NEWS_PROVIDERS: providerList(PROVIDER_IDS.news),
  AC_SEARCH_PROVIDERS: providerList(PROVIDER_IDS.search),
  AC_GEOCODING_PROVIDERS: providerList(PROVIDER_IDS.geocoding),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: Port.default(8787),
  DATA_DIR: Optional,
  DATABASE_URL: Optional.pipe(
    z
      .string()
      .regex(
        /^postgres(ql)?:\/\//u,
        'must be a PostgreSQL URL, postgresql://user:password@host:5432/database',
      )
      .optional(),
  ),
  AC_DB_POOL_MAX: PositiveInt.default(10),
  AC_DB_STATEMENT_TIMEOUT_MS: PositiveInt.default(5000),
  AC_INSTANCES: PositiveInt.default(1),
  PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .transform((value) => value.replace(/\/+$/u, ''))
    .optional(),
  /** The same as PUBLIC_URL (the name the OAuth documentation uses); both set must agree. */
  AC_PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .transform((value) => value.replace(/\/+$/u, ''))
    .optional(),
  AC_OAUTH: z.enum(['on', 'off']).optional(),
  AC_OAUTH_ACCESS_TOKEN_TTL: Duration.default(3600),
  AC_OAUTH_REFRESH_TOKEN_TTL: Duration.default(30 * 24 * 3600),
  AC_OAUTH_CIMD_ALLOW_LOOPBACK: z.enum(['on', 'off']).default('off'),
  AC_API_KEY: Optional,
  AC_ADMIN_TOKEN: Optional.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  AC_METRICS_TOKEN: Optional.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  AC_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AC_BODY_MAX_BYTES: PositiveInt.default(256 * 1024),
  AC_UPSTREAM_TIMEOUT_MS: PositiveInt.default(8000),
  ...PROVIDER_SHAPE,
  AC_MEMORY_KEY_MAX_CHARS: PositiveInt.default(DEFAULT_LIMITS.memoryKeyMaxChars),
  AC_MEMORY_VALUE_MAX_BYTES: PositiveInt.default(DEFAULT_LIMITS.memoryValueMaxBytes),
  AC_METADATA_MAX_BYTES: PositiveInt.default(DEFAULT_LIMITS.metadataMaxBytes),
  AC_MEMORIES_PER_AGENT: PositiveInt.default(DEFAULT_LIMITS.memoriesPerAgent),
  AC_IMPORT_MAX_BYTES: PositiveInt.default(DEFAULT_LIMITS.importMaxBytes),
  AC_EMBEDDINGS: z.enum(['on', 'off']).default('on'),
  AC_EMBEDDINGS_URL: Optional.pipe(z.url({ protocol: /^https?$/ }).optional()),
  AC_EMBEDDINGS_MODEL: z.string().min(1).default('nomic-embed-text'),
  AC_EMBEDDINGS_API_KEY: Optional,
  AC_EMBEDDINGS_MIN_SIMILARITY: z.coerce
    .number()
    .min(-1)
    .max(1)
    .default(DEFAULT_LIMITS.semanticMinSimilarity),
  AC_MEMORY_TTL: MemoryTtl,
  AC_MEMORY_HISTORY: Optional.pipe(z.coerce.number<string | undefined>().int().min(0).max(1000).optional()),
  AC_MEMORY_HISTORY_RETENTION: Optional.pipe(Duration.optional()),
  AC_QUERY_MAX_CHARS: PositiveInt.default(DEFAULT_LIMITS.queryMaxChars),
  AC_DAILY_SPEND_LIMIT_CENTS: Optional.pipe(z.coerce.number<string | undefined>().int().min(1).optional()),
  AC_UNLIMITED_DAILY_SPEND_LIMIT_CENTS: Optional.pipe(
    z.coerce.number<string | undefined>().int().min(1).optional(),
  ),
  AC_RATE_LIMIT: z.enum(['on', 'off']).default('on'),
  AC_RATE_LIMIT_PER_KEY_PER_MINUTE: PositiveInt.default(600),
  AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: PositiveInt.default(60),
  AC_REGISTER_PER_HOUR_PER_ADDRESS: PositiveInt.default(5),
  AC_REGISTER_PER_HOUR_PER_DOMAIN: PositiveInt.default(50),
  AC_TRUST_PROXY: TrustProxy,
  AC_CORS_ORIGINS: Optional.transform((value) =>
    (value ?? '')
      .split(',')
      .map((origin) => origin.trim().replace(/\/+$/u, ''))
      .filter(Boolean),
  ),
  AC_LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  AC_SHUTDOWN_TIMEOUT_MS: PositiveInt.default(10_000),
  AC_HEADERS_TIMEOUT_MS: PositiveInt.default(10_000),
  AC_REQUEST_TIMEOUT_MS: PositiveInt.default(30_000),
});
