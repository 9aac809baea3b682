/**
 * Versions, conditional writes, expiry and history (issue 15) against a model, over random sequences of
 * stores (with and without expected_version, create_only, ttl_seconds), retrieves (with refresh_on_read),
 * deletes, history listings, restores and clock moves: every answer (status, version, expires_at, value, the
 * versions listed) is the model's, an expired memory is never returned or listed, a version grows by exactly
 * one per write (delete markers included), the history never holds more than its limit, a restore equals the
 * old value, and a failed request changes nothing and costs nothing.
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
      ttl?: number | undefined;
      expected?: number | undefined;
      createOnly: boolean;
    }
  | { kind: 'retrieve'; key: string; refresh: boolean }
  | { kind: 'delete'; key: string; expected?: number | undefined }
  | { kind: 'history'; key: string }
  | { kind: 'restore'; key: string; version: number; expected?: number | undefined }
  | { kind: 'advance'; seconds: number };

/** History kept per key in this test (AC_MEMORY_HISTORY), small so that trimming shows. */
const KEEP = 3;

// Mostly one key, so that its history fills and trims; sometimes another.
const key = fc.oneof({ weight: 3, arbitrary: fc.constant('a') }, { weight: 1, arbitrary: fc.constant('b') });
const version = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) },
);
const store = fc.record({
  kind: fc.constant('store' as const),
  key,
  value: fc.string({ maxLength: 3 }),
  ttl: fc.constantFrom(undefined, 0, 10, 60),
  expected: version,
  createOnly: fc.oneof(
    { weight: 3, arbitrary: fc.constant(false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
});
const restore = fc.record({
  kind: fc.constant('restore' as const),
  key,
  version: fc.integer({ min: 1, max: 6 }),
  expected: version,
});
// Steps that land exactly on an expiry (10 s, 60 s) as often as between them.
const advance = fc.record({
  kind: fc.constant('advance' as const),
  seconds: fc.oneof(fc.constantFrom(5, 10, 50, 60), fc.integer({ min: 1, max: 90 })),
});
// Writes weigh most, so that a key's history fills past its limit and trims.
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: store },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retrieve' as const), key, refresh: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), key, expected: version }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('history' as const), key }) },
  { weight: 2, arbitrary: restore },
  { weight: 1, arbitrary: advance },
);

interface ModelMemory {
  value: string;
  version: number;
  expiresAtMs?: number;
  ttl?: number;
}
interface ModelEntry {
  version: number;
  deleted: boolean;
  value?: string;
  ttl?: number;
}

/** The answer's status: 200, or the HTTP status of the error code the core threw. */
const STATUS: Record<string, number> = { not_found: 404, version_conflict: 412, invalid_input: 400 };

function request(c: Exclude<Command, { kind: 'advance' }>): { op: string; input: Record<string, unknown> } {
  const input: Record<string, unknown> = { memory_key: c.key };
  if ('expected' in c && c.expected !== undefined) input.expected_version = c.expected;
  switch (c.kind) {
    case 'store':
      Object.assign(input, { memory_value: c.value, memory_type: 'fact' });
      if (c.ttl !== undefined) input.ttl_seconds = c.ttl;
      if (c.expected === undefined && c.createOnly) input.create_only = true;
      return { op: 'memory_store', input };
    case 'retrieve':
      if (c.refresh) input.refresh_on_read = true;
      return { op: 'memory_retrieve', input };
    case 'delete':
      return { op: 'memory_delete', input };
    case 'history':
      return { op: 'memory_history', input };
    case 'restore':
      return { op: 'memory_restore', input: { ...input, version: c.version } };
  }
}

describe('memory versions, expiry and history against a model', () => {
  it('answers as the model does, over random sequences of writes, reads, deletes, restores and time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 40 }), async (commands) => {
        const t = coreHarness({ memoryHistoryVersions: KEEP });
        const { key: apiKey } = await t.register();
        const model = new Map<string, ModelMemory>();
        /** Each key's history, oldest first, at most KEEP entries. */
        const histories = new Map<string, ModelEntry[]>();
        const live = (k: string) => {
          const m = model.get(k);
          return m && (m.expiresAtMs === undefined || m.expiresAtMs > t.clock.now().getTime())
            ? m
            : undefined;
        };
        const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
        const record = (k: string, entry: ModelEntry) => {
          const next = [...(histories.get(k) ?? []), entry];
          histories.set(k, next.slice(Math.max(0, next.length - KEEP)));
        };
        const nextVersion = (k: string) => (histories.get(k)?.at(-1)?.version ?? 0) + 1;
        let charged = 0;

        for (const c of commands) {
          if (c.kind === 'advance') {
            t.clock.advance(c.seconds * 1000);
            continue;
          }
          const { op, input } = request(c);
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
          const history = histories.get(c.key) ?? [];
          const conditionFails =
            'expected' in c && c.expected !== undefined
              ? existing?.version !== c.expected
              : c.kind === 'store' && c.createOnly && existing !== undefined;
          const write = (value: string, ttl: number | undefined): ModelMemory => {
            const next: ModelMemory = {
              value,
              version: nextVersion(c.key),
              ...(ttl ? { ttl, expiresAtMs: now + ttl * 1000 } : {}),
            };
            model.set(c.key, next);
            record(c.key, { version: next.version, deleted: false, value, ...(ttl ? { ttl } : {}) });
            charged++;
            return next;
          };
          let want: { status: number; memory?: ModelMemory } = { status: 200 };
          if (conditionFails && c.kind !== 'history' && c.kind !== 'retrieve') want = { status: 412 };
          else if (c.kind === 'store') want = { status: 200, memory: write(c.value, c.ttl || undefined) };
          else if (c.kind === 'retrieve') {
            if (!existing) want = { status: 404 };
            else {
              if (c.refresh && existing.ttl) existing.expiresAtMs = now + existing.ttl * 1000;
              charged++;
              want = { status: 200, memory: existing };
            }
          } else if (c.kind === 'delete') {
            if (!existing) want = { status: 404 };
            else {
              model.delete(c.key);
              record(c.key, { version: existing.version + 1, deleted: true });
            }
          } else if (c.kind === 'history') {
            if (!existing && history.length === 0) want = { status: 404 };
            else charged++;
          } else {
            const entry = history.find((e) => e.version === c.version);
            if (!entry) want = { status: 404 };
            else if (entry.deleted) want = { status: 400 };
            else want = { status: 200, memory: write(entry.value as string, entry.ttl) };
          }

          const context = JSON.stringify({ c, got: got.body });
          expect(got.status, context).toBe(want.status);
          if (want.status === 412) expect(got.body.current_version, context).toBe(existing?.version ?? null);
          if (want.memory) {
            expect(got.body.memory.version, context).toBe(want.memory.version);
            expect(got.body.memory.expires_at, context).toBe(iso(want.memory.expiresAtMs));
            expect(got.body.memory.memory_value, context).toBe(want.memory.value);
          }
          if (c.kind === 'history' && want.status === 200) {
            const listed = got.body.versions as {
              version: number;
              deleted: boolean;
              memory_value?: string;
            }[];
            expect(listed.length, context).toBeLessThanOrEqual(KEEP);
            expect(
              listed.map((v) => [v.version, v.deleted, v.memory_value ?? null]),
              context,
            ).toEqual([...history].reverse().map((e) => [e.version, e.deleted, e.value ?? null]));
            expect(got.body.current_version, context).toBe(existing?.version ?? null);
          }
        }

        // Listing shows exactly the live memories, at their versions; the balance paid exactly the successes.
        const listed = (await t.call('memory_search', {}, apiKey)).body as any;
        const liveNow = [...model.keys()].filter((k) => live(k)).sort();
        expect(listed.memories.map((m: { memory_key: string }) => m.memory_key).sort()).toEqual(liveNow);
        for (const m of listed.memories) expect(m.version).toBe(model.get(m.memory_key)?.version);
        expect(listed.credit_balance_cents).toBe(50 - charged - 1);
      }),
      { numRuns: 1000 },
    );
  });
});
