/**
 * What the upstream providers need to know, taken from the service Config by the composition root. Which
 * URLs and keys exist is not listed here: each provider's descriptor declares its own (provider-list.ts).
 */
import { AppError } from '../core/errors.js';
import type { QueryType } from '../core/model.js';
import { type Upstream, upstreamLabel } from './http-client.js';

export interface LiveConfig {
  /** Sent as User-Agent on every upstream call. */
  userAgent: string;
  /** Per upstream call, in milliseconds. */
  timeoutMs: number;
  /**
   * How many instances call the upstreams (AC_INSTANCES, 1 unless set): each takes that share of every
   * provider's rate, so that together they stay within it.
   */
  instances?: number;
  /** Retry tuning (defaults: 2 retries, backoff 500 ms doubling to at most 8 s); tests shorten it. */
  retry?: { maxRetries?: number; backoffBaseMs?: number; backoffMaxMs?: number };
  /**
   * Base URLs (scheme, host and port only; each provider appends its documented path), by the keys the
   * descriptors declare (`openMeteoGeocoding`, `wttr`, …). The configuration fills in the defaults, the
   * real public hosts; a URL without a default (`searxng`) is absent unless set.
   */
  urls: Readonly<Record<string, string>>;
  /**
   * Which providers each chain holds, in order (default: every provider of the kind, in list order);
   * `geocoding` is the chain that gives MET Norway its coordinates.
   */
  providers?: Partial<Record<QueryType | 'geocoding', readonly string[]>>;
  /** API keys by provider id (`brave`, `coingecko`, `finnhub`, …); a keyed provider reads its own. */
  apiKeys?: Readonly<Record<string, string>>;
  /**
   * Token-bucket rates by provider id, replacing the descriptor's (and AC_INSTANCES' share of it): for an
   * instance of the upstream that allows more (a self-hosted Nominatim or SearXNG), and for tests. Not read
   * from the environment.
   */
  rates?: Readonly<Record<string, { perMinute: number; burst?: number }>>;
}

/**
 * The base URL configured under `key`, or AppError `internal`: the chains do not call a provider whose
 * URL is not set, so a missing one is a mistake of this service rather than an upstream failure.
 */
export function baseUrl(config: LiveConfig, key: string, upstream: Upstream): string {
  const url = config.urls[key];
  if (url) return url;
  throw new AppError(
    'internal',
    `${upstreamLabel(upstream)} is not configured on this service; nothing was charged.`,
    { source: upstream.id },
  );
}
