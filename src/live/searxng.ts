/**
 * Web search from a SearXNG instance (keyless, self-hosted; used only when `AC_SEARXNG_URL` is set): the
 * merged results of its engines, numbered. JSON output must be enabled on the instance (`search.formats`
 * in its settings.yml includes `json`); otherwise it answers 403, reported as such. A 200 with no results
 * while engines report errors means every engine failed (captcha, block), which is a failure, not "none".
 */
import { z } from 'zod';
import { AppError } from '../core/errors.js';
import type { LiveResult } from '../core/live-port.js';
import { buildUrl, type HttpClient, type Upstream, upstreamLabel } from './http-client.js';
import { baseUrl, type LiveConfig } from './live-config.js';
import { normaliseWebResults } from './news-items.js';
import type { ProviderDescriptor } from './provider-descriptor.js';

export const SEARXNG: Upstream = { id: 'searxng', name: 'SearXNG', kind: 'search' };

/** No default instance: SearXNG joins the search chain only when AC_SEARXNG_URL names one. */
export const SEARXNG_PROVIDER: ProviderDescriptor = {
  id: SEARXNG.id,
  serves: { search: fetchSearxng },
  urls: { searxng: { variable: 'AC_SEARXNG_URL' } },
  perMinute: 60,
};

const resultSchema = z.object({
  url: z.string(),
  title: z.string().nullish(),
  content: z.string().nullish(),
});

const searchSchema = z.object({
  results: z.array(resultSchema),
  /** `[engine, reason]` pairs, e.g. `["google", "CAPTCHA"]`. */
  unresponsive_engines: z.array(z.unknown()).optional(),
});

function failed(message: string, details: Record<string, number> = {}): AppError {
  return new AppError('upstream_failed', `${upstreamLabel(SEARXNG)} ${message}`, {
    source: SEARXNG.id,
    ...details,
  });
}

export async function fetchSearxng(
  http: HttpClient,
  config: LiveConfig,
  query: string,
  deadline?: number,
): Promise<LiveResult> {
  const url = buildUrl(baseUrl(config, 'searxng', SEARXNG), '/search', { q: query, format: 'json' });
  const body = await http.getJson(SEARXNG, url, searchSchema, {
    deadline,
    onStatus: (status) =>
      status === 403
        ? failed(
            'refuses JSON output (HTTP 403): its operator must enable the json format; nothing was charged.',
            { upstream_status: status },
          )
        : undefined,
  });
  if (body.results.length === 0 && (body.unresponsive_engines?.length ?? 0) > 0) {
    throw failed('got no answer from any of its search engines; nothing was charged, try again later.');
  }
  const results = normaliseWebResults(
    body.results.map((result) => ({
      title: result.title ?? '',
      url: result.url,
      snippet: result.content ?? '',
    })),
  );
  return { source: SEARXNG.id, data: { results, coverage: 'web' } };
}
