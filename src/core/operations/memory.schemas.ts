/**
 * The schemas of the memory operations (memory.ts) and of a stored memory, built from the configured limits.
 * Inputs are strict: an unknown field is a 400 naming it, because a misspelt optional field would otherwise
 * be silently ignored.
 */
import { Buffer } from 'node:buffer';
import { z } from 'zod';
import type { Limits } from '../limits.js';
import { type JsonObject, MAX_TTL_SECONDS, MEMORY_TYPES } from '../model.js';
import { billed, boundedInt, NO_BIDI_CONTROLS, NO_CONTROL_CHARS, Timestamp, UTF16_UNITS } from './fields.js';
import { createTransferSchemas } from './memory-transfer.schemas.js';

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

const MemoryType = z.enum(MEMORY_TYPES).describe('Kind of memory: context, preference, workflow or fact.');

/** A stored memory, as every memory operation answers it. */
const Memory = z
  .object({
    memory_key: z.string(),
    memory_value: z.string(),
    memory_type: MemoryType,
    metadata: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
    updated_at: Timestamp,
    version: z
      .int()
      .min(1)
      .describe('1 when created, one more with each store over it; REST sends it as the ETag ("3").'),
    expires_at: Timestamp.nullable().describe(
      'When it expires (then it is absent everywhere); null: never. Set by ttl_seconds, expires_at or the type default.',
    ),
  })
  .describe('A stored memory.');

/** An entry of a memory's history, as memory_history answers it. */
const MemoryVersion = z
  .object({
    version: z.int().min(1),
    stored_at: Timestamp.describe('When this version was stored, or when the memory was deleted.'),
    deleted: z.boolean().describe('True for a delete, which has no content and can be undone by a restore.'),
    memory_value: z.string().optional(),
    memory_type: MemoryType.optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .describe('An entry of a memory history: a version as stored, or the delete that ended it.');

/** A memory as memory_search answers it: with a query, its score and snippet too. */
const SearchHit = Memory.extend({
  score: z
    .number()
    .optional()
    .describe('With query: how well it matches (higher is better; compare within one answer only).'),
  snippet: z
    .string()
    .nullable()
    .optional()
    .describe(
      'With query: a passage of the value around the first match, matches marked **so**; null if none.',
    ),
}).describe('A stored memory, as memory_search finds it.');

/** The longest memory_search query, and the longest cursor this service gives. */
export const SEARCH_QUERY_MAX = 500;
const CURSOR_MAX = 2000;

/** The most metadata fields one filter compares. */
export const FILTER_FIELDS_MAX = 10;

const SearchFilter = z
  .strictObject({
    memory_types: z
      .array(MemoryType)
      .min(1, 'filter.memory_types must hold at least one type')
      .optional()
      .describe('Only memories of these types.'),
    metadata: z
      .record(
        z.string().max(200, 'filter.metadata field names must be at most 200 characters'),
        z.union([z.string(), z.number(), z.boolean(), z.null()], {
          message: 'filter.metadata values must be strings, numbers, booleans or null',
        }),
      )
      .refine((fields) => Object.keys(fields).length <= FILTER_FIELDS_MAX, {
        message: `filter.metadata may compare at most ${FILTER_FIELDS_MAX} fields`,
      })
      .optional()
      .describe(
        'Only memories whose metadata has each of these top-level fields equal to the value, like {"project": "apollo"}.',
      ),
    updated_after: OffsetTimestamp('filter.updated_after')
      .optional()
      .describe('Only memories updated after this instant (ISO 8601).'),
    updated_before: OffsetTimestamp('filter.updated_before')
      .optional()
      .describe('Only memories updated before this instant (ISO 8601).'),
    key_prefix: z
      .string('filter.key_prefix must be a string')
      .min(1, 'filter.key_prefix must not be empty')
      .max(1000, 'filter.key_prefix must be at most 1000 characters')
      .regex(NO_CONTROL_CHARS, 'filter.key_prefix must not contain control characters')
      .optional()
      .describe('Only memories whose memory_key starts with this (case-sensitive).'),
  })
  .describe('Conditions a memory must all meet to be listed or found.');

export function OffsetTimestamp(field: string) {
  return z.iso.datetime({
    offset: true,
    message: `${field} must be an ISO 8601 date-time, like 2026-11-01T00:00:00Z`,
  });
}

/** The most memories one memory_store_batch call stores. */
export const BATCH_MAX = 100;

/** The largest version a memory can reach (a 32-bit integer in PostgreSQL). */
export const MAX_VERSION = 2_147_483_647;

const ExpectedVersion = boundedInt('expected_version', 1, MAX_VERSION).describe(
  'Only if the memory exists at this version (REST: If-Match: "N"); otherwise 412 version_conflict with ' +
    'current_version, nothing charged or changed. Guards against overwriting a change made since you read it.',
);

export function createMemorySchemas(limits: Limits) {
  const MemoryKey = z
    .string()
    .min(1, 'memory_key must not be empty')
    .max(limits.memoryKeyMaxChars, `memory_key must be at most ${limits.memoryKeyMaxChars} characters`)
    .regex(NO_CONTROL_CHARS, 'memory_key must not contain control characters')
    .regex(
      NO_BIDI_CONTROLS,
      'memory_key must not contain bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)',
    )
    .describe(
      `Name of the memory, unique per agent; 1-${limits.memoryKeyMaxChars} characters (${UTF16_UNITS}), no control or bidirectional formatting characters.`,
    );

  const MemoryValue = z
    .string()
    .refine(
      (value) => Buffer.byteLength(value, 'utf8') <= limits.memoryValueMaxBytes,
      `memory_value must be at most ${limits.memoryValueMaxBytes} bytes of UTF-8`,
    )
    .describe(`The text to remember; at most ${limits.memoryValueMaxBytes} bytes of UTF-8.`);

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

  const StoreInput = z
    .strictObject({
      memory_key: MemoryKey,
      memory_value: MemoryValue,
      memory_type: MemoryType.default('context'),
      metadata: Metadata.optional(),
      ttl_seconds: boundedInt('ttl_seconds', 0, MAX_TTL_SECONDS)
        .optional()
        .describe(
          `Seconds until the memory expires (at most ${MAX_TTL_SECONDS}, ten years); 0: never, even if its type ` +
            'has a default time to live. Absent: the type default, if the operator set one, else never.',
        ),
      expires_at: z.iso
        .datetime({
          offset: true,
          message: 'expires_at must be an ISO 8601 date-time, like 2026-12-31T00:00:00Z',
        })
        .optional()
        .describe(
          'When the memory expires (ISO 8601, in the future, at most ten years ahead); instead of ttl_seconds.',
        ),
      expected_version: ExpectedVersion.optional(),
      create_only: z
        .boolean('create_only must be true or false')
        .optional()
        .describe(
          'Only if no memory has this key (REST: If-None-Match: *); otherwise 412 version_conflict, nothing ' +
            'charged or changed.',
        ),
    })
    .refine((input) => !(input.create_only && input.expected_version !== undefined), {
      message:
        'create_only and expected_version contradict each other (absent, or at a version); send one of them.',
      path: ['create_only'],
    })
    .refine((input) => !(input.ttl_seconds !== undefined && input.expires_at !== undefined), {
      message: 'ttl_seconds and expires_at both say when the memory expires; send one of them.',
      path: ['expires_at'],
    });

  return {
    MemoryKey,
    Memory,
    MemoryVersion,
    ...createTransferSchemas(
      { MemoryKey, MemoryValue, MemoryType, Metadata, Memory, OffsetTimestamp },
      limits,
    ),

    StoreInput,
    StoreOutput: z.object({
      success: z.literal(true),
      memory: Memory,
      created: z.boolean().describe('True when the key was new, false when an existing memory was updated.'),
      ...billed,
    }),

    RetrieveInput: z.strictObject({
      memory_key: MemoryKey,
      refresh_on_read: z
        .union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')], {
          message: 'refresh_on_read must be true or false',
        })
        .optional()
        .describe(
          'true: a memory that expires lives its time to live again from now (its version and place stay).',
        ),
    }),
    RetrieveOutput: z.object({ success: z.literal(true), memory: Memory, ...billed }),

    DeleteInput: z.strictObject({ memory_key: MemoryKey, expected_version: ExpectedVersion.optional() }),
    DeleteOutput: z.object({
      success: z.literal(true),
      deleted: z.literal(true),
      memory_key: z.string(),
      ...billed,
    }),

    StoreBatchInput: z.strictObject({
      memories: z
        .array(StoreInput)
        .min(1, 'memories must hold at least one memory')
        .max(BATCH_MAX, `memories must hold at most ${BATCH_MAX} memories`)
        .refine((items) => new Set(items.map((item) => item.memory_key)).size === items.length, {
          message: 'each memory_key may appear once in a batch',
        })
        .describe(
          `1-${BATCH_MAX} memories, each as memory_store takes it (expected_version, create_only, ttl_seconds included), ` +
            'each memory_key once. All are stored, or none.',
        ),
    }),
    StoreBatchOutput: z.object({
      success: z.literal(true),
      results: z
        .array(z.object({ memory: Memory, created: z.boolean() }))
        .describe('One per memory sent, in the same order.'),
      count: z.int(),
      ...billed,
    }),

    HistoryInput: z.strictObject({
      memory_key: MemoryKey,
      limit: boundedInt('limit', 1, limits.historyLimitMax, true)
        .default(limits.historyLimitDefault)
        .describe(`At most this many entries, newest first (1-${limits.historyLimitMax}).`),
    }),
    HistoryOutput: z.object({
      success: z.literal(true),
      memory_key: z.string(),
      current_version: z
        .int()
        .nullable()
        .describe('The live memory version; null when the key is deleted or expired (its history is kept).'),
      versions: z.array(MemoryVersion).describe('Newest first: each version as stored, and each delete.'),
      ...billed,
    }),

    RestoreInput: z.strictObject({
      memory_key: MemoryKey,
      version: boundedInt('version', 1, MAX_VERSION).describe(
        'The version to bring back, from memory_history: its value, type and metadata become a new version.',
      ),
      expected_version: ExpectedVersion.optional(),
    }),
    RestoreOutput: z.object({
      success: z.literal(true),
      memory: Memory,
      created: z.boolean().describe('True when the key was deleted or expired: the restore undid that.'),
      restored_from: z.int().describe('The version whose content was restored.'),
      ...billed,
    }),

    SearchInput: z.strictObject({
      memory_type: MemoryType.optional().describe('Only memories of this type.'),
      limit: boundedInt('limit', 1, limits.searchLimitMax)
        .default(limits.searchLimitDefault)
        .describe(`At most this many memories per page (1-${limits.searchLimitMax}).`),
      query: z
        .string('query must be a string')
        .max(SEARCH_QUERY_MAX, `query must be at most ${SEARCH_QUERY_MAX} characters`)
        .regex(NO_CONTROL_CHARS, 'query must not contain control characters')
        .refine((text) => text.trim() !== '', 'query must hold a word (or leave it out to list)')
        .optional()
        .describe(
          `Words to search for (at most ${SEARCH_QUERY_MAX} characters): ranks the memories whose key, value or ` +
            'metadata values hold any of them (English stems: "launched" finds "launch"), the memory whose key is ' +
            'the query first, then keys holding it, then by relevance. Absent: most recently updated first.',
        ),
      filter: SearchFilter.optional(),
      cursor: z
        .string('cursor must be a string')
        .max(CURSOR_MAX, 'cursor is not one this service gave')
        .optional()
        .describe('next_cursor of the previous page, to read the next one (with the same query and filter).'),
    }),
    SearchOutput: z.object({
      success: z.literal(true),
      memories: z
        .array(SearchHit)
        .describe('Most recently updated first; with query, best match first, each with score and snippet.'),
      count: z.int().describe('How many memories this page holds.'),
      total: z.int().describe('How many memories match the query and filter, on all pages together.'),
      next_cursor: z
        .string()
        .nullable()
        .describe('Pass as cursor to read the next page; null on the last page.'),
      ...billed,
    }),
  };
}

export type MemorySchemas = ReturnType<typeof createMemorySchemas>;
