/**
 * The one HTTP client every upstream provider goes through, so that all calls send the same User-Agent and
 * Accept headers, share one timeout, validate the body against the documented shape, and fail the same way:
 * AppError `upstream_timeout` or `upstream_failed` with a message an agent can act on, `details.source`,
 * and the original error kept as `cause` (never in the message).
 */
import type { z } from 'zod';
import { AppError, type ErrorDetails } from '../core/errors.js';

/** Who is being called, for messages and `details.source`. */
export interface Upstream {
  /** Machine name, also the `source` of results, e.g. `open-meteo`. */
  id: string;
  /** Human name, e.g. `Open-Meteo`. */
  name: string;
  /** What it serves, e.g. `weather`. */
  kind: string;
}

export interface HttpClientOptions {
  userAgent: string;
  timeoutMs: number;
}

export interface GetJsonOptions {
  headers?: Record<string, string>;
  /** Maps a non-2xx status to a specific error (e.g. 404 → not_found); undefined means `upstream_failed`. */
  onStatus?: (status: number) => AppError | undefined;
}

export interface HttpClient {
  /** GETs `url` and returns the JSON body validated by `schema`. Throws AppError only. */
  getJson<S extends z.ZodType>(
    upstream: Upstream,
    url: URL,
    schema: S,
    options?: GetJsonOptions,
  ): Promise<z.output<S>>;
}

/** "The weather upstream (Open-Meteo)": the subject of every message about an upstream. */
export function upstreamLabel(upstream: Upstream): string {
  return `The ${upstream.kind} upstream (${upstream.name})`;
}

/** The origin of `base` (scheme, host, port) plus the documented `path` and a %20-encoded query string. */
export function buildUrl(base: string, path: string, params: Record<string, string | undefined> = {}): URL {
  const url = new URL(path, new URL(base).origin);
  const pairs: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(value)}`);
  }
  url.search = pairs.join('&');
  return url;
}

/** Seconds to wait from a Retry-After header (delta-seconds or HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

function statusError(upstream: Upstream, response: Response): AppError {
  const label = upstreamLabel(upstream);
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  const details: ErrorDetails = { source: upstream.id, upstream_status: response.status };
  if (retryAfter !== undefined) details.retry_after_s = retryAfter;
  if (response.status === 429) {
    const when = retryAfter === undefined ? 'in a minute' : `in ${retryAfter} s`;
    return new AppError(
      'upstream_failed',
      `${label} is rate-limiting this service (HTTP 429); nothing was charged, try again ${when}.`,
      details,
    );
  }
  return new AppError(
    'upstream_failed',
    `${label} answered with HTTP ${response.status}; nothing was charged, try again later.`,
    details,
  );
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const { userAgent, timeoutMs } = options;

  return {
    async getJson(upstream, url, schema, callOptions = {}) {
      const label = upstreamLabel(upstream);
      const details: ErrorDetails = { source: upstream.id };
      const signal = AbortSignal.timeout(timeoutMs);
      const transportError = (err: unknown): AppError =>
        signal.aborted
          ? new AppError(
              'upstream_timeout',
              `${label} did not answer within ${seconds(timeoutMs)}; nothing was charged, try again later.`,
              details,
              err,
            )
          : new AppError(
              'upstream_failed',
              `${label} could not be reached; nothing was charged, try again later.`,
              details,
              err,
            );

      let response: Response;
      let text: string;
      try {
        response = await fetch(url, {
          headers: { ...callOptions.headers, 'User-Agent': userAgent, Accept: 'application/json' },
          signal,
        });
        if (!response.ok) {
          await response.body?.cancel().catch(() => undefined);
          throw callOptions.onStatus?.(response.status) ?? statusError(upstream, response);
        }
        text = await response.text();
      } catch (err) {
        throw err instanceof AppError ? err : transportError(err);
      }

      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw new AppError(
          'upstream_failed',
          `${label} answered with something that is not JSON; nothing was charged, try again later.`,
          details,
          err,
        );
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) {
        throw new AppError(
          'upstream_failed',
          `${label} answered in an unexpected format; nothing was charged, try again later.`,
          details,
          parsed.error,
        );
      }
      return parsed.data;
    },
  };
}
