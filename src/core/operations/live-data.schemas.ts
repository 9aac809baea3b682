/**
 * The schemas of the live-data operation (live-data.ts), built from the configured limits.
 */
import { z } from 'zod';
import type { Limits } from '../limits.js';
import { QUERY_TYPES, type QueryType } from '../model.js';
import {
  billed,
  boundedInt,
  HAS_NON_SPACE,
  NO_NON_SPACE_CONTROL_CHARS,
  Timestamp,
  trimmedAtMost,
  UTF16_UNITS,
} from './fields.js';

/*
 * The normalised `data` of each query_type, the same whichever provider answered (src/live normalises each
 * upstream into these shapes; test/live checks every provider's answers against them).
 */

const Text = (description: string) => z.string().describe(description);
const NullableText = (description: string) => z.string().nullable().describe(description);
const HttpUrl = (description: string) =>
  z
    .url({ protocol: /^https?$/ })
    .regex(/^https?:\/\//)
    .meta({ format: 'uri' }) // published with the pattern, which replaces zod's own format
    .describe(`${description} An absolute http(s) URL.`);

const Place = z
  .object({
    name: Text('The place\'s name, e.g. "Paris".'),
    admin1: NullableText('Its first-level region (a state, a province), when known.'),
    country: NullableText('Its country, in English, when known.'),
    country_code: z
      .string()
      .regex(/^[A-Z]{2}$/)
      .nullable()
      .describe('Its ISO 3166-1 alpha-2 country code, upper case, when known.'),
    latitude: z.number().min(-90).max(90).describe('Latitude in decimal degrees.'),
    longitude: z.number().min(-180).max(180).describe('Longitude in decimal degrees.'),
    timezone: NullableText('Its IANA time zone, e.g. "Europe/Paris", when known.'),
  })
  .describe('The place the weather is for: the best match for the query.');

const OtherPlace = z
  .object({
    name: Text("The other place's name."),
    admin1: NullableText('Its first-level region, when known.'),
    country: NullableText('Its country, when known.'),
  })
  .describe('Another place of that name.');

export const WeatherData = z
  .object({
    location: Place,
    temperature_c: z.number().describe('Air temperature in degrees Celsius.'),
    feels_like_c: z
      .number()
      .nullable()
      .describe('Apparent ("feels like") temperature in degrees Celsius, when the provider gives it.'),
    humidity_pct: z.number().min(0).max(100).nullable().describe('Relative humidity in percent, when given.'),
    wind_kph: z.number().min(0).nullable().describe('Wind speed in km/h (10 m above ground), when given.'),
    condition: Text('The conditions in words, e.g. "Partly cloudy" ("Unknown" when the provider says none).'),
    condition_code: z
      .int()
      .nullable()
      .describe('The WMO weather code of the conditions, when the provider uses WMO codes (else null).'),
    observed_at: Timestamp.describe('When the conditions were observed or modelled, ISO 8601 UTC.'),
    alternatives: z
      .array(OtherPlace)
      .describe('Other places of that name, best match first; add the country ("Paris, US") to pick one.'),
  })
  .describe('Current weather (query_type weather).');

export const PriceData = z
  .object({
    asset: z
      .object({
        name: Text('The asset\'s name, e.g. "Bitcoin", "Euro", "Gold".'),
        symbol: Text('Its symbol or code, e.g. "BTC", "EUR", "XAU", "AAPL".'),
        kind: z.enum(['crypto', 'fiat', 'metal', 'stock']).describe('What kind of asset it is.'),
        id: Text("The provider's own id of the coin (CoinGecko's), when it has one.").optional(),
      })
      .describe('The asset priced.'),
    price: z.number().min(0).describe('The price of one unit of the asset, in `currency`.'),
    currency: z
      .string()
      .regex(/^[A-Z]{3,5}$/)
      .describe('The ISO 4217 code (or symbol) of the currency the price is in, e.g. "USD".'),
    as_of: Timestamp.nullable().describe(
      'When the provider priced it, ISO 8601 UTC; null when it does not say.',
    ),
    change_24h_pct: z
      .number()
      .nullable()
      .optional()
      .describe(
        'Change over 24 hours (stocks: since the previous close) in percent, from providers that give it.',
      ),
    previous_close: z
      .number()
      .nullable()
      .optional()
      .describe('The previous close, in `currency` (stocks only).'),
    unit: z.literal('troy_ounce').optional().describe('The unit priced (metals: one troy ounce).'),
  })
  .describe('An asset price (query_type price).');

export const NewsData = z
  .object({
    items: z
      .array(
        z
          .object({
            title: Text('The headline, plain text.'),
            url: HttpUrl('The article.'),
            published_at: Timestamp.nullable().describe(
              'When it was published, ISO 8601 UTC; null when unknown.',
            ),
            source: Text('The publisher, e.g. "Reuters" or "theverge.com".'),
            discussion_url: HttpUrl('The discussion of the item (Hacker News only).').optional(),
            points: z.number().nullable().optional().describe('Its points (Hacker News only).'),
            comments: z.int().nullable().optional().describe('Its number of comments (Hacker News only).'),
          })
          .describe('One article.'),
      )
      .describe('The articles, newest first (undated last), each URL and headline once; empty when none.'),
  })
  .describe('Latest news (query_type news).');

export const SearchData = z
  .object({
    results: z
      .array(
        z
          .object({
            position: z.int().min(1).describe('Its rank, 1 for the first.'),
            title: Text("The page's title, plain text."),
            url: HttpUrl('The page.'),
            snippet: Text('An excerpt or description of the page, plain text (may be empty).'),
          })
          .describe('One result.'),
      )
      .describe('The results in rank order, each URL once; empty when none.'),
    coverage: z
      .enum(['web', 'reference'])
      .describe(
        'web: results of a web search engine; reference: encyclopedia and instant-answer results only ' +
          '(no web search engine is configured).',
      ),
  })
  .describe('Search results (query_type search).');

/** The data schema of each query_type. */
export const LIVE_DATA_SHAPES = {
  news: NewsData,
  search: SearchData,
  weather: WeatherData,
  price: PriceData,
} as const satisfies Record<QueryType, z.ZodType>;

const ANSWER_FIELDS = {
  success: z.literal(true).describe('Always true in a successful answer.'),
  from_cache: z
    .boolean()
    .describe(
      "Whether the result came from the cache (or another request's fetch) rather than this request's.",
    ),
  ...billed,
  fetched_at: Timestamp.describe('When the upstream answered.'),
  source: z.string().describe('The upstream that answered.'),
  as_of: Timestamp.optional().describe("The upstream's own timestamp of the data, when it gives one."),
  providers_asked: z
    .array(z.string())
    .optional()
    .describe(
      'Present when more than one provider was tried for this result (fail-over): they, in chain ' +
        'order, failed and empty ones included, and those that could not be asked because what they ' +
        'depend on failed (a weather provider without coordinates when the geocoders failed). When every ' +
        'one had no hits, the data is empty.',
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
};

/** The answer to a request of `type`: its data shape, and the fields every answer has. */
function answerOf<T extends QueryType, D extends z.ZodType>(type: T, data: D) {
  return z
    .object({
      query_type: z.literal(type).describe(`The request's query_type (${type}): data is in its shape.`),
      data,
      ...ANSWER_FIELDS,
    })
    .describe(`The answer to a ${type} request.`);
}

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
    DataOutput: z
      .discriminatedUnion('query_type', [
        answerOf('news', NewsData),
        answerOf('search', SearchData),
        answerOf('weather', WeatherData),
        answerOf('price', PriceData),
      ])
      .describe(
        'The answer: query_type, echoed from the request, says which shape data has (news, search, ' +
          'weather or price); the other fields are the same for every query_type.',
      )
      // Published as an object whose shape is one of the four, as MCP requires of an output schema.
      .meta({ type: 'object' }),
  };
}

export type LiveDataSchemas = ReturnType<typeof createLiveDataSchemas>;
