/**
 * The schemas of the live-data operation (live-data.ts), built from the configured limits.
 */
import { z } from 'zod';
import type { Limits } from '../limits.js';
import { QUERY_TYPES } from '../model.js';
import {
  billed,
  boundedInt,
  HAS_NON_SPACE,
  NO_NON_SPACE_CONTROL_CHARS,
  Timestamp,
  trimmedAtMost,
  UTF16_UNITS,
} from './fields.js';

export function createLiveDataSchemas(limits: Limits) {
  const max = limits.queryMaxChars;
  /**
   * Trimmed first; each rule after the trim holds for the trimmed text exactly when it holds for the text as
   * sent, so the published patterns apply to what a client sends. The NFKC length has no JSON Schema form.
   */
  const Query = z
    .string()
    .trim()
    .regex(HAS_NON_SPACE, 'query must not be empty')
    .regex(NO_NON_SPACE_CONTROL_CHARS, 'query must not contain control characters (other than whitespace)')
    .regex(trimmedAtMost(max), `query must be at most ${max} characters`)
    .refine(
      (query) => query.normalize('NFKC').length <= max,
      `query must be at most ${max} characters once normalised (NFKC)`,
    )
    .describe(
      'Search term (news, search), city name (weather) or asset name (price). ' +
        `1-${max} characters once trimmed (${UTF16_UNITS}), and at most ${max} once normalised (NFKC); ` +
        'no control characters other than whitespace.',
    );

  return {
    DataInput: z.strictObject({
      query_type: z.enum(QUERY_TYPES).describe('news, search, weather or price.'),
      query: Query,
      cache_minutes: z
        .number('cache_minutes must be a number')
        .int('cache_minutes must be an integer')
        .min(-1, `cache_minutes must be -1 (cached only) or from 0 to ${limits.cacheMinutesMax}`)
        .max(limits.cacheMinutesMax, `cache_minutes must be at most ${limits.cacheMinutesMax}`)
        .default(limits.cacheMinutesDefault)
        .describe(
          'Accept a cached result at most this many minutes old (free); 0 always fetches fresh. -1 means ' +
            'cached only: a cached result of any age (or one being fetched) free, else 404 not_cached, ' +
            'never fetching and never charging.',
        ),
      max_cost_cents: boundedInt('max_cost_cents', 0, 1_000_000)
        .optional()
        .describe(
          'The most this request may cost. Below the fresh price (2), only a cached result (or one already ' +
            'being fetched) is accepted; otherwise the answer is 402 max_cost_exceeded and nothing is charged.',
        ),
    }),
    DataOutput: z.object({
      success: z.literal(true),
      data: z
        .record(z.string(), z.unknown())
        .describe('The normalised result; its shape depends on query_type.'),
      from_cache: z.boolean(),
      ...billed,
      fetched_at: Timestamp.describe('When the upstream answered.'),
      source: z.string().describe('The upstream that answered.'),
      as_of: Timestamp.optional().describe("The upstream's own timestamp of the data, when it gives one."),
      providers_asked: z
        .array(z.string())
        .optional()
        .describe(
          'Present when more than one provider was called for this result (fail-over): they, in chain ' +
            'order, failed and empty ones included. When every one had no hits, the data is empty.',
        ),
      cache_age_s: z.int().describe('Seconds since the result was fetched (0 when fresh).'),
      cache_state: z
        .enum(['fresh', 'hit', 'stale', 'shared_flight'])
        .describe(
          'How this answer was served: fresh (fetched for this request), hit (from the cache: within ' +
            'cache_minutes, within a refresh floor, or cache_minutes -1), stale (every upstream failed; an ' +
            "older cached result instead), shared_flight (the result of another request's fetch, joined).",
        ),
      cached_at: Timestamp.describe(
        'When the served result was fetched and cached; equal to fetched_at, also when fresh.',
      ),
      stale: z
        .literal(true)
        .optional()
        .describe('Present when every upstream failed and an older cached result was served instead (free).'),
      freshness_note: z
        .string()
        .optional()
        .describe('Present when the cache was used although cache_minutes asked for fresher data, and why.'),
    }),
  };
}

export type LiveDataSchemas = ReturnType<typeof createLiveDataSchemas>;
