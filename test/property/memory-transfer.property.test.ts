/**
 * Export then import (issue 15), over random memories: any key, any value the API accepts (NUL, emoji,
 * lone-surrogate-free Unicode), any JSON metadata, every type, with and without expiry, updated several
 * times (versions above 1). Importing an agent's export into a fresh agent gives identical memories (the
 * second export is the first, byte for byte), is charged exactly one store per memory, and importing it
 * again changes nothing and costs nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MEMORY_TYPES } from '../../src/core/model.js';
import { NO_CONTROL_CHARS } from '../../src/core/operations/fields.js';
import { coreHarness } from '../helpers/core-harness.js';

const text = fc.string({ unit: 'grapheme', maxLength: 30 });
const memoryKey = fc
  .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 })
  .filter((k) => NO_CONTROL_CHARS.test(k));
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }),
  ),
})).value;
const write = fc.record({
  memory_key: memoryKey,
  memory_value: fc.oneof(text, fc.constant('a\u0000b'), fc.constant('🙂 é 中')),
  memory_type: fc.constantFrom(...MEMORY_TYPES),
  metadata: fc.dictionary(text, json, { maxKeys: 4 }),
  ttl_seconds: fc.option(fc.integer({ min: 60, max: 86_400 }), { nil: undefined }),
});

describe('export then import', () => {
  it('gives identical memories in a fresh agent, charged per memory, and is idempotent', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 25 }), async (writes) => {
        const t = coreHarness({ memoryHistoryVersions: 3 });
        const source = await t.register('source@example.test');
        const target = await t.register('target@example.test');
        // 50 cents of starter credit pays for at most 25 writes, and the import of what they leave.
        for (const fields of writes) {
          const input = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
          await t.call('memory_store', input, source.key);
          t.clock.advance(1_000);
        }
        const exportText = async (id: string) => {
          let out = '';
          for await (const line of t.core.transfer.exportMemories(id)) out += `${JSON.stringify(line)}\n`;
          return out;
        };
        const exported = await exportText(source.id);
        const lines = exported.split('\n').filter(Boolean).length;
        expect(lines).toBe(new Set(writes.map((w) => w.memory_key)).size);

        const imported = await t.body('memory_import', { ndjson: exported }, target.key);
        expect(imported).toMatchObject({ lines, created: lines, updated: 0, cost_cents: lines });
        expect(await exportText(target.id)).toBe(exported);
        const { account } = await t.ledger(target.id);
        expect(account?.balanceCents).toBe(50 - lines);

        for (const policy of ['skip', 'overwrite', 'if_newer']) {
          const again = await t.body('memory_import', { ndjson: exported, policy }, target.key);
          expect(again).toMatchObject({ unchanged: lines, created: 0, updated: 0, cost_cents: 0 });
        }
        expect(await exportText(target.id)).toBe(exported);
        await t.expectBalanced(target.id);
      }),
      { numRuns: 150 },
    );
  });
});
