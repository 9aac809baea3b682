/**
 * The zod schemas of every operation's input and output, shared by every face (REST bodies, MCP tool
 * schemas, the OpenAPI document). Built from the configured limits, so a changed limit shows everywhere.
 * Inputs are strict: an unknown field is a 400 naming it, because a misspelt optional field would
 * otherwise be silently ignored.
 */
import { Buffer } from 'node:buffer';
import { z } from 'zod';
import { emailDomain, isDisposableDomain, withinRfcLengths } from './email.js';
import type { Limits } from './limits.js';
import { type JsonObject, MEMORY_TYPES, PLANS, QUERY_TYPES } from './model.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/u;
/** Control characters other than whitespace (tab, line breaks), which a query's normalisation collapses. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
const NON_SPACE_CONTROL_CHARS = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/u;
/** Bidirectional formatting characters: they make a key display differently from what it is. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a JSON value nests at most `max` levels deep, checked without recursion. */
function depthWithin(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    if (depth > max) return false;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return true;
}

/**
 * An integer field within [min, max], each failure naming the field. `fromQuery` accepts the numeric string
 * a query parameter arrives as.
 */
function boundedInt(field: string, min: number, max: number, fromQuery = false) {
  const base = fromQuery
    ? z.coerce.number(`${field} must be a number`)
    : z.number(`${field} must be a number`);
  return base
    .int(`${field} must be an integer`)
    .min(min, `${field} must be at least ${min}`)
    .max(max, `${field} must be at most ${max}`);
}

export function createSchemas(limits: Limits) {
  const MemoryKey = z
    .string()
    .min(1, 'memory_key must not be empty')
    .max(limits.memoryKeyMaxChars, `memory_key must be at most ${limits.memoryKeyMaxChars} characters`)
    .refine((key) => !CONTROL_CHARS.test(key), 'memory_key must not contain control characters')
    .refine(
      (key) => !BIDI_CONTROLS.test(key),
      'memory_key must not contain bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)',
    )
    .describe(
      `Name of the memory, unique per agent; 1-${limits.memoryKeyMaxChars} characters, no control or bidirectional formatting characters.`,
    );

  const MemoryValue = z
    .string()
    .refine(
      (value) => Buffer.byteLength(value, 'utf8') <= limits.memoryValueMaxBytes,
      `memory_value must be at most ${limits.memoryValueMaxBytes} bytes of UTF-8`,
    )
    .describe(`The text to remember; at most ${limits.memoryValueMaxBytes} bytes of UTF-8.`);

  const MemoryType = z.enum(MEMORY_TYPES).describe('Kind of memory: context, preference, workflow or fact.');

  /** Any JSON object, kept exactly as sent: keys such as `__proto__` are ordinary keys. */
  const Metadata = z
    .unknown()
    .refine(isJsonObject, { message: 'metadata must be a JSON object', abort: true })
    .refine((value) => depthWithin(value, limits.metadataMaxDepth), {
      message: `metadata must not nest deeper than ${limits.metadataMaxDepth} levels`,
      abort: true,
    })
    .refine(
      (value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= limits.metadataMaxBytes,
      `metadata must be at most ${limits.metadataMaxBytes} bytes when serialised as JSON`,
    )
    .meta({ type: 'object', additionalProperties: true })
    .describe(
      `Free-form JSON object; at most ${limits.metadataMaxBytes} bytes serialised.`,
    ) as unknown as z.ZodType<JsonObject, JsonObject>;

  const Timestamp = z.iso.datetime().describe('ISO 8601 date-time, UTC.');
  const Cents = z.int().describe('An amount in cents.');
  const PlanName = z.enum(PLANS, { message: `plan must be one of ${PLANS.join(', ')}` });

  const Memory = z
    .object({
      memory_key: z.string(),
      memory_value: z.string(),
      memory_type: MemoryType,
      metadata: z.record(z.string(), z.unknown()),
      created_at: Timestamp,
      updated_at: Timestamp,
    })
    .describe('A stored memory.');

  const billed = {
    cost_cents: Cents.describe('Cents charged for this request.'),
    credit_balance_cents: Cents.describe('Balance after this request, in cents.'),
  };

  const Transaction = z.object({
    id: z.string(),
    at: Timestamp,
    operation: z.string(),
    amount_cents: Cents.describe(
      'The change of the balance: positive for credits, negative for charges paid from the balance, 0 for ' +
        'charges covered by the unlimited plan and for plan changes.',
    ),
    balance_after_cents: Cents,
    cost_cents: Cents.optional().describe('On a charge: what the operation cost, whoever paid it.'),
    plan: PlanName.optional().describe('The plan that covered a charge, or the new plan of a plan_change.'),
    memory_key: z.string().optional(),
    query_type: z.string().optional(),
    query: z.string().optional(),
  });

  const Email = z
    .string()
    .trim()
    .toLowerCase()
    .max(254, 'email must be at most 254 characters')
    .meta({ format: 'email' })
    .pipe(z.email('email must be a valid e-mail address, like agent@example.com'))
    .describe('E-mail address of the account (trimmed and lower-cased).');

  /** A new account's address: also within RFC 5321's lengths, and not at a disposable-address provider. */
  const RegisterEmail = Email.refine(withinRfcLengths, {
    message: 'email must have at most 64 characters before the @ and at most 63 in each part of the domain',
    abort: true,
  }).refine((email) => !isDisposableDomain(emailDomain(email)), {
    error: (issue) =>
      `email is at ${emailDomain(String(issue.input))}, a disposable (throwaway) address provider; ` +
      'register with a permanent address you control',
  });

  return {
    /** The limits these schemas were built from, for descriptions that state a default or a range. */
    limits,
    MemoryKey,
    Memory,

    RegisterInput: z.strictObject({
      email: RegisterEmail,
      name: z
        .string()
        .max(limits.nameMaxChars, `name must be at most ${limits.nameMaxChars} characters`)
        .optional()
        .describe('Optional display name of the agent.'),
    }),
    RegisterOutput: z.object({
      agent_key: z.string().describe('The API key. Shown once: keep it.'),
      credit_balance_cents: Cents,
      plan: PlanName,
      email: z.string(),
      name: z.string().nullable(),
      created_at: Timestamp,
    }),

    StoreInput: z.strictObject({
      memory_key: MemoryKey,
      memory_value: MemoryValue,
      memory_type: MemoryType.default('context'),
      metadata: Metadata.optional(),
    }),
    StoreOutput: z.object({
      success: z.literal(true),
      memory: Memory,
      created: z.boolean().describe('True when the key was new, false when an existing memory was updated.'),
      ...billed,
    }),

    RetrieveInput: z.strictObject({ memory_key: MemoryKey }),
    RetrieveOutput: z.object({ success: z.literal(true), memory: Memory, ...billed }),

    DeleteInput: z.strictObject({ memory_key: MemoryKey }),
    DeleteOutput: z.object({
      success: z.literal(true),
      deleted: z.literal(true),
      memory_key: z.string(),
      ...billed,
    }),

    SearchInput: z.strictObject({
      memory_type: MemoryType.optional().describe('Only memories of this type.'),
      limit: boundedInt('limit', 1, limits.searchLimitMax)
        .default(limits.searchLimitDefault)
        .describe(`At most this many memories (1-${limits.searchLimitMax}).`),
    }),
    SearchOutput: z.object({
      success: z.literal(true),
      memories: z.array(Memory).describe('Most recently updated first.'),
      count: z.int(),
      ...billed,
    }),

    DataInput: z.strictObject({
      query_type: z.enum(QUERY_TYPES).describe('news, search, weather or price.'),
      query: z
        .string()
        .trim()
        .min(1, 'query must not be empty')
        .refine(
          (query) => !NON_SPACE_CONTROL_CHARS.test(query),
          'query must not contain control characters (other than whitespace)',
        )
        .max(limits.queryMaxChars, `query must be at most ${limits.queryMaxChars} characters`)
        .refine(
          (query) => query.normalize('NFKC').length <= limits.queryMaxChars,
          `query must be at most ${limits.queryMaxChars} characters once normalised (NFKC)`,
        )
        .describe('Search term (news, search), city name (weather) or asset name (price).'),
      cache_minutes: boundedInt('cache_minutes', 0, limits.cacheMinutesMax)
        .default(limits.cacheMinutesDefault)
        .describe('Accept a cached result at most this many minutes old (free); 0 always fetches fresh.'),
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
      cache_age_s: z.int().describe('Seconds since the result was fetched (0 when fresh).'),
      stale: z
        .literal(true)
        .optional()
        .describe('Present when every upstream failed and an older cached result was served instead (free).'),
      freshness_note: z
        .string()
        .optional()
        .describe('Present when the cache was used although cache_minutes asked for fresher data, and why.'),
    }),

    RotateKeyInput: z.strictObject({}),
    RotateKeyOutput: z.object({
      agent_key: z.string().describe('The new API key. Shown once: keep it. The old key no longer works.'),
      credit_balance_cents: Cents,
      plan: PlanName,
      rotated_at: Timestamp,
    }),

    AccountInput: z.strictObject({}),
    AccountOutput: z.object({
      email: z.string(),
      name: z.string().nullable(),
      plan: PlanName,
      credit_balance_cents: Cents,
      created_at: Timestamp,
    }),

    AccountInfoInput: z.strictObject({
      limit: boundedInt('limit', 1, limits.transactionsLimitMax)
        .default(limits.accountInfoLimitDefault)
        .describe(`At most this many recent ledger entries (1-${limits.transactionsLimitMax}).`),
    }),

    TransactionsInput: z.strictObject({
      limit: boundedInt('limit', 1, limits.transactionsLimitMax, true)
        .default(limits.transactionsLimitDefault)
        .describe(`At most this many entries (1-${limits.transactionsLimitMax}), newest first.`),
    }),
    TransactionsOutput: z.object({
      transactions: z.array(Transaction),
      count: z.int(),
      credit_balance_cents: Cents,
    }),
    AccountInfoOutput: z.object({
      email: z.string(),
      name: z.string().nullable(),
      plan: PlanName,
      credit_balance_cents: Cents,
      created_at: Timestamp,
      recent_transactions: z.array(Transaction).describe('Newest first.'),
    }),

    AddCreditsInput: z.strictObject({
      email: Email,
      cents: boundedInt('cents', 1, limits.topUpMaxCents).describe('Cents to add to the balance.'),
    }),
    SetPlanInput: z.strictObject({
      email: Email,
      plan: PlanName.describe(
        'pay-as-you-go: paid from the balance, refused when it runs short; unlimited: never refused for credit.',
      ),
    }),
    SetPlanOutput: z.object({
      success: z.literal(true),
      email: z.string(),
      plan: PlanName,
      previous_plan: PlanName,
      changed: z.boolean().describe('False when the account was on this plan already.'),
      credit_balance_cents: Cents,
    }),
    AddCreditsOutput: z.object({
      success: z.literal(true),
      email: z.string(),
      credited_cents: Cents,
      credit_balance_cents: Cents,
    }),
  };
}

export type Schemas = ReturnType<typeof createSchemas>;
export type Input<K extends keyof Schemas> = z.output<Schemas[K]>;
export type Output<K extends keyof Schemas> = z.input<Schemas[K]>;
