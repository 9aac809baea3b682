/**
 * The schemas of moving memories out and in (memory_export, memory_import): a line of the NDJSON both
 * speak, and the import's input, whose NDJSON body is parsed and checked line by line here, so that a bad
 * line is a 400 that names its line before anything is read or written.
 */
import { z } from 'zod';
import type { Limits } from '../limits.js';
import { type JsonObject, MAX_TTL_SECONDS } from '../model.js';
import { billed, boundedInt } from './fields.js';

/** The conflict policies of an import: what a line does to a live memory under its key that differs. */
export const IMPORT_POLICIES = ['skip', 'overwrite', 'if_newer'] as const;

interface Blocks {
  MemoryKey: z.ZodType<string, string>;
  MemoryValue: z.ZodType<string, string>;
  MemoryType: z.ZodType<'context' | 'preference' | 'workflow' | 'fact'>;
  Metadata: z.ZodType<JsonObject, JsonObject>;
  Memory: z.ZodObject;
  OffsetTimestamp: (field: string) => z.ZodType<string, string>;
}

export function createTransferSchemas(blocks: Blocks, limits: Limits) {
  const { MemoryKey, MemoryValue, MemoryType, Metadata, OffsetTimestamp } = blocks;

  const ExportLine = blocks.Memory.extend({
    ttl_seconds: z
      .int()
      .nullable()
      .describe('The time to live it was stored with (a refresh_on_read extends it by this); null: none.'),
  }).describe('One memory per line of the export, as memory_import reads it back.');

  const ImportLine = z
    .strictObject({
      memory_key: MemoryKey,
      memory_value: MemoryValue,
      memory_type: MemoryType.default('context'),
      metadata: Metadata.optional(),
      created_at: OffsetTimestamp('created_at').optional().describe('Kept as given; absent: now.'),
      updated_at: OffsetTimestamp('updated_at')
        .optional()
        .describe('Kept as given, and compared by the if_newer policy; absent: now.'),
      version: boundedInt('version', 1, 2_147_483_647)
        .optional()
        .describe("Kept when the key is new to this agent; otherwise the key's numbers go on."),
      expires_at: OffsetTimestamp('expires_at')
        .nullable()
        .optional()
        .describe(
          'null: never expires; absent: as a store (ttl_seconds, else the type default). Past: skipped.',
        ),
      ttl_seconds: boundedInt('ttl_seconds', 0, MAX_TTL_SECONDS).nullable().optional(),
    })
    .describe('A memory to import: a line of memory_export, or any line with memory_key and memory_value.');

  type Line = z.output<typeof ImportLine> & { line: number };

  const Ndjson = z
    .string('the body must be NDJSON text')
    .transform((text, ctx): Line[] => {
      const lines: Line[] = [];
      const keys = new Set<string>();
      const fail = (message: string) => {
        ctx.addIssue({ code: 'custom', message: `${message}; nothing was imported or charged` });
        return z.NEVER;
      };
      const rows = text.split('\n');
      for (let i = 0; i < rows.length; i++) {
        const row = (rows[i] as string).replace(/\r$/, '');
        if (row.trim() === '') continue;
        if (lines.length >= limits.memoriesPerAgent) {
          return fail(
            `the body holds more than ${limits.memoriesPerAgent} memories, the most an agent may hold`,
          );
        }
        let value: unknown;
        try {
          value = JSON.parse(row);
        } catch (err) {
          return fail(`line ${i + 1} is not JSON (${(err as Error).message})`);
        }
        const parsed = ImportLine.safeParse(value);
        if (!parsed.success) {
          const issue = parsed.error.issues[0] as z.core.$ZodIssue;
          const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
          return fail(`line ${i + 1}: ${where}${issue.message}`);
        }
        if (keys.has(parsed.data.memory_key)) {
          return fail(`line ${i + 1} repeats memory_key ${JSON.stringify(parsed.data.memory_key)}`);
        }
        keys.add(parsed.data.memory_key);
        lines.push({ ...parsed.data, line: i + 1 });
      }
      return lines;
    })
    .describe('The memories, one JSON object per line (NDJSON), as memory_export writes them.');

  const Counts = {
    lines: z.int().describe('Memories in the body.'),
    created: z.int().describe('Keys that had no live memory: created.'),
    updated: z.int().describe('Live memories replaced by their line (the policy allowed it).'),
    unchanged: z.int().describe('Lines equal to the live memory already there: nothing to write, free.'),
    skipped: z
      .int()
      .describe('Lines that differ from a live memory the policy kept (skip; if_newer not newer).'),
    expired: z.int().describe('Lines whose expires_at has passed: not imported.'),
  };

  return {
    ExportInput: z.strictObject({}),
    ExportLine,
    ImportLine,
    ImportInput: z.strictObject({
      ndjson: Ndjson,
      policy: z
        .enum(IMPORT_POLICIES, { message: `policy must be one of ${IMPORT_POLICIES.join(', ')}` })
        .default('skip')
        .describe(
          'What a line does to a live memory under its key that differs from it: skip (keep it; the default), ' +
            'overwrite, or if_newer (overwrite only if the line was updated later).',
        ),
      dry_run: z
        .union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')], {
          message: 'dry_run must be true or false',
        })
        .default(false)
        .describe(
          'true: only report what would change and what it would cost; nothing written, nothing charged.',
        ),
    }),
    ImportOutput: z.object({
      success: z.literal(true),
      dry_run: z.boolean(),
      policy: z.enum(IMPORT_POLICIES),
      ...Counts,
      price_cents: z
        .int()
        .describe('What the writes cost (created + updated, priced as stores); charged unless dry_run.'),
      ...billed,
    }),
  };
}
