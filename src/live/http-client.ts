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
  /** Per attempt. */
  timeoutMs: number;
  /** Further attempts after a network error, 408, 429 or 5xx (default 2). */
  maxRetries?: number;
  /** Backoff base and cap in ms (defaults 500 and 8000). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Injected in tests, so that backoff needs no real waiting. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface GetJsonOptions {
  headers?: Record<string, string>;
  /** Maps a non-2xx status to a specific error (e.g. 404 → not_found); undefined means `upstream_failed`. */
  onStatus?: (status: number) => AppError | undefined;
  /** Epoch ms by which the call, retries included, must be done (the provider's share of the budget). */
  deadline?: number;
  /** A shorter limit per attempt than the client's (a geocoder's); the client's when longer. */
  timeoutMs?: number;
}

export interface GetTextOptions extends GetJsonOptions {
  /** The Accept header, e.g. `application/rss+xml, application/xml`. */
  accept: string;
  /** The body must have one of these content types (checked by prefix); an HTML bot wall is a failure. */
  contentTypes: string[];
}

export interface HttpClient {
  /** GETs `url` and returns the body as text, after checking its content type. Throws AppError only. */
  getText(upstream: Upstream, url: URL, options: GetTextOptions): Promise<string>;
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

/**
 * An answer that arrived but is not data (wrong format, a soft failure sent with 200): `upstream_failed`,
 * "<label> answered <what>; nothing was charged, try again later."
 */
export function softFailure(upstream: Upstream, what: string, cause?: unknown): AppError {
  return new AppError(
    'upstream_failed',
    `${upstreamLabel(upstream)} answered ${what}; nothing was charged, try again later.`,
    { source: upstream.id },
    cause,
  );
}

/** Statuses worth another try: the upstream may answer next time. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Full-jitter exponential backoff: a random wait up to base·2^attempt, capped. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  return Math.round(random() * Math.min(maxMs, baseMs * 2 ** attempt));
}

interface Attempt {
  text: string;
  contentType: string;
}

export function createHttpClient(options: HttpClientOptions): HttpClient {
  const { userAgent, timeoutMs } = options;
  const maxRetries = options.maxRetries ?? 2;
  const baseMs = options.backoffBaseMs ?? 500;
  const maxMs = options.backoffMaxMs ?? 8000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;

  /** One GET; throws AppError, with `retryable` set on the ones worth another try. */
  async function attempt(
    upstream: Upstream,
    url: URL,
    accept: string,
    call: GetJsonOptions,
    budgetMs: number,
  ) {
    const label = upstreamLabel(upstream);
    const details: ErrorDetails = { source: upstream.id };
    const limit = Math.max(1, Math.min(timeoutMs, call.timeoutMs ?? timeoutMs, budgetMs));
    const signal = AbortSignal.timeout(limit);
    try {
      const response = await fetch(url, {
        headers: { ...call.headers, 'User-Agent': userAgent, Accept: accept },
        signal,
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        const mapped = call.onStatus?.(response.status);
        if (mapped) throw mapped;
        throw statusError(upstream, response);
      }
      return { text: await response.text(), contentType: response.headers.get('content-type') ?? '' };
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (signal.aborted) {
        throw new AppError(
          'upstream_timeout',
          `${label} did not answer within ${seconds(limit)}; nothing was charged, try again later.`,
          details,
          err,
        );
      }
      throw new AppError(
        'upstream_failed',
        `${label} could not be reached; nothing was charged, try again later.`,
        { ...details, network_error: true },
        err,
      );
    }
  }

  /** GETs with retries on network errors, 408, 429 and 5xx, within the call's deadline. */
  async function fetchText(
    upstream: Upstream,
    url: URL,
    accept: string,
    call: GetJsonOptions,
  ): Promise<Attempt> {
    const deadline = call.deadline ?? Date.now() + timeoutMs * (maxRetries + 1);
    for (let retry = 0; ; retry++) {
      try {
        return await attempt(upstream, url, accept, call, deadline - Date.now());
      } catch (err) {
        const error = err as AppError;
        const status = error.details.upstream_status;
        const retryable =
          error.details.network_error === true || (typeof status === 'number' && isRetryableStatus(status));
        if (!retryable || retry >= maxRetries) throw error;
        const after = error.details.retry_after_s;
        const waitMs = typeof after === 'number' ? after * 1000 : backoffMs(retry, baseMs, maxMs, random);
        // A wait that would overrun the budget is not worth it: fail now, so the chain can fail over.
        if (Date.now() + waitMs >= deadline) throw error;
        await sleep(waitMs);
      }
    }
  }

  return {
    async getText(upstream, url, call) {
      const { text, contentType } = await fetchText(upstream, url, call.accept, call);
      const type = contentType.toLowerCase();
      if (!call.contentTypes.some((wanted) => type.startsWith(wanted))) {
        throw softFailure(
          upstream,
          `with ${contentType || 'no content type'} instead of the expected format`,
        );
      }
      return text;
    },

    async getJson(upstream, url, schema, call = {}) {
      const { text } = await fetchText(upstream, url, 'application/json', call);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (err) {
        throw softFailure(upstream, 'with something that is not JSON', err);
      }
      const parsed = schema.safeParse(json);
      if (!parsed.success) throw softFailure(upstream, 'in an unexpected format', parsed.error);
      return parsed.data;
    },
  };
}
