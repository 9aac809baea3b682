/**
 * Versions, conditional writes and expiry (issue 15) against a model, over random sequences of stores
 * (with and without expected_version, create_only, ttl_seconds), retrieves (with refresh_on_read), deletes
 * and clock moves: every answer (status, version, expires_at) is the model's, an expired memory is never
 * returned or listed, a version grows by exactly one per successful store, and a failed condition changes
 * nothing and costs nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { coreHarness } from '../helpers/core-harness.js';

type Command =
  | {
      kind: 'store';
      key: string;
      value: string;
      ttl: number | undefined;
      expected: number | undefined;
      createOnly: boolean;
    }
  | { kind: 'retrieve'; key: string; refresh: boolean }
  | { kind: 'delete'; key: string; expected?: number | undefined }
  | { kind: 'advance'; seconds: number };

const key = fc.constantFrom('a', 'b');
const version = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) },
);
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('store' as const),
    key,
    value: fc.string({ maxLength: 3 }),
    ttl: fc.constantFrom(undefined, 0, 10, 60),
    expected: version,
    createOnly: fc.oneof(
      { weight: 3, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
  }),
  fc.record({ kind: fc.constant('retrieve' as const), key, refresh: fc.boolean() }),
  fc.record(
    { kind: fc.constant('delete' as const), key, expected: version },
    { requiredKeys: ['kind', 'key'] },
  ),
  // Steps that land exactly on an expiry (10 s, 60 s) as often as between them.
  fc.record({
    kind: fc.constant('advance' as const),
    seconds: fc.oneof(fc.constantFrom(5, 10, 50, 60), fc.integer({ min: 1, max: 90 })),
  }),
);

interface ModelMemory {
  value: string;
  version: number;
  expiresAtMs?: number;
  ttl?: number;
}

/** The answer's status: 200, or the HTTP status of the error code the core threw. */
const STATUS: Record<string, number> = { not_found: 404, version_conflict: 412, invalid_input: 400 };

describe('memory versions and expiry against a model', () => {
  it('answers as the model does, over random sequences of conditional writes, reads, deletes and time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 30 }), async (commands) => {
        const t = coreHarness();
        const { key: apiKey } = await t.register();
        const model = new Map<string, ModelMemory>();
        /** Each key's newest version number, delete markers included: the history goes on across lives. */
        const lastVersion = new Map<string, number>();
        const live = (k: string) => {
          const m = model.get(k);
          return m && (m.expiresAtMs === undefined || m.expiresAtMs > t.clock.now().getTime())
            ? m
            : undefined;
        };
        const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
        let charged = 0;

        for (const c of commands) {
          if (c.kind === 'advance') {
            t.clock.advance(c.seconds * 1000);
            continue;
          }
          const input: Record<string, unknown> = { memory_key: c.key };
          let op: string;
          if (c.kind === 'store') {
            op = 'memory_store';
            Object.assign(input, { memory_value: c.value, memory_type: 'fact' });
            if (c.ttl !== undefined) input.ttl_seconds = c.ttl;
            if (c.expected !== undefined) input.expected_version = c.expected;
            else if (c.createOnly) input.create_only = true;
          } else if (c.kind === 'retrieve') {
            op = 'memory_retrieve';
            if (c.refresh) input.refresh_on_read = true;
          } else {
            op = 'memory_delete';
            if (c.expected !== undefined) input.expected_version = c.expected;
          }
          const got = await t.call(op, input, apiKey).then(
            (outcome) => ({ status: 200, body: outcome.body as any }),
            (err: unknown) => {
              if (!(err instanceof AppError)) throw err;
              return { status: STATUS[err.code] ?? 500, body: err.toBody() as any };
            },
          );

          // The model's answer.
          const now = t.clock.now().getTime();
          const existing = live(c.key);
          let want: { status: number; version?: number; expiresAtMs?: number } = { status: 200 };
          if (c.kind === 'store') {
            const conditionFails =
              (c.expected === undefined && c.createOnly && existing) ||
              (c.expected !== undefined && existing?.version !== c.expected);
            if (conditionFails) want = { status: 412 };
            else {
              const ttl = c.ttl || undefined;
              const next: ModelMemory = {
                value: c.value,
                version: (lastVersion.get(c.key) ?? 0) + 1,
                ...(ttl ? { ttl, expiresAtMs: now + ttl * 1000 } : {}),
              };
              model.set(c.key, next);
              lastVersion.set(c.key, next.version);
              charged++;
              want = {
                status: 200,
                version: next.version,
                ...(next.expiresAtMs ? { expiresAtMs: next.expiresAtMs } : {}),
              };
            }
          } else if (c.kind === 'retrieve') {
            if (!existing) want = { status: 404 };
            else {
              if (c.refresh && existing.ttl) existing.expiresAtMs = now + existing.ttl * 1000;
              charged++;
              want = {
                status: 200,
                version: existing.version,
                ...(existing.expiresAtMs ? { expiresAtMs: existing.expiresAtMs } : {}),
              };
            }
          } else if (c.expected !== undefined && existing?.version !== c.expected) want = { status: 412 };
          else if (!existing) want = { status: 404 };
          else {
            model.delete(c.key);
            lastVersion.set(c.key, existing.version + 1);
          }

          expect(got.status, JSON.stringify({ c, got: got.body })).toBe(want.status);
          if (want.status === 412) {
            expect(got.body.current_version).toBe(existing?.version ?? null);
          }
          if (want.status === 200 && c.kind !== 'delete') {
            expect(got.body.memory.version).toBe(want.version);
            expect(got.body.memory.expires_at).toBe(iso(want.expiresAtMs));
            expect(got.body.memory.memory_value).toBe(model.get(c.key)?.value);
          }
        }

        // Listing shows exactly the live memories, at their versions; the balance paid exactly the successes.
        const listed = (await t.call('memory_search', {}, apiKey)).body as any;
        const liveNow = [...model.keys()].filter((k) => live(k)).sort();
        expect(listed.memories.map((m: { memory_key: string }) => m.memory_key).sort()).toEqual(liveNow);
        for (const m of listed.memories) expect(m.version).toBe(model.get(m.memory_key)?.version);
        expect(listed.credit_balance_cents).toBe(50 - charged - 1);
      }),
      { numRuns: 400 },
    );
  });
});
