/**
 * Moving an agent's memories out and in. Export reads them in key order, a page at a time, as NDJSON lines
 * (free: it reads what the agent already paid to store). Import plans every line against the agent's live
 * memories (created, updated, unchanged, skipped by the policy, expired), then writes the plan through the
 * charge port, charged per memory written, or refuses the whole of it; a dry run answers the plan, free.
 */
import { canonicalJson } from './canonical-json.js';
import type { ImportItem, ImportPlanner } from './charge-port.js';
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import type { ChargeContext, Ledger } from './ledger.js';
import type { Limits } from './limits.js';
import { createMemoryCharges } from './memory-charges.js';
import { pagesByKey } from './memory-pages.js';
import { expiryOf } from './memory-rules.js';
import { toMemoryView } from './memory-views.js';
import { live } from './memory-writes.js';
import type { Memory } from './model.js';
import type { Input, Output } from './schemas.js';
import type { SemanticIndex } from './semantic-index.js';
import type { StorePort } from './store-port.js';
import type { StoreReader } from './store-reader.js';

/** Memories read per page of an export. */
const EXPORT_PAGE = 500;

type Line = Input<'ImportInput'>['ndjson'][number];
type Outcome = 'created' | 'updated' | 'unchanged' | 'skipped' | 'expired';

export function toExportLine(memory: Memory): Output<'ExportLine'> {
  return { ...toMemoryView(memory), ttl_seconds: memory.ttlSeconds ?? null };
}

const iso = (text: string | undefined) => (text === undefined ? undefined : new Date(text).toISOString());

export function createMemoryTransfer(
  store: StorePort,
  ledger: Ledger,
  clock: Clock,
  limits: Limits,
  semantic?: SemanticIndex,
) {
  const charged = createMemoryCharges(store.charges, ledger, limits);

  /** The agent's live memories as export lines, in key order, read a page at a time. */
  async function* exportMemories(agentId: string): AsyncGenerator<Output<'ExportLine'>> {
    for await (const page of pagesByKey(store, agentId, clock.now().toISOString(), EXPORT_PAGE)) {
      for (const memory of page) yield toExportLine(memory);
    }
  }

  /** The memory a line would write, as a store would set what the line leaves out. */
  function contentOf(
    line: Line,
    at: Date,
  ): Pick<Memory, 'value' | 'type' | 'metadata' | 'expiresAt' | 'ttlSeconds'> {
    const base = { value: line.memory_value, type: line.memory_type, metadata: line.metadata ?? {} };
    if (line.expires_at === null) return line.ttl_seconds ? { ...base, ttlSeconds: line.ttl_seconds } : base;
    if (line.expires_at !== undefined) {
      const ttl = line.ttl_seconds ?? undefined;
      return { ...base, expiresAt: iso(line.expires_at), ...(ttl ? { ttlSeconds: ttl } : {}) };
    }
    return {
      ...base,
      ...expiryOf(
        {
          memory_type: line.memory_type,
          ...(line.ttl_seconds == null ? {} : { ttl_seconds: line.ttl_seconds }),
        },
        at,
        limits.memoryTtlSeconds,
      ),
    };
  }

  function sameContent(memory: Memory, content: ReturnType<typeof contentOf>): boolean {
    return (
      memory.value === content.value &&
      memory.type === content.type &&
      // Metadata is a JSON object: the order of its fields is not content.
      canonicalJson(memory.metadata) === canonicalJson(content.metadata) &&
      memory.expiresAt === content.expiresAt
    );
  }

  /** What each line does, oldest update first (so that the update order follows the lines' updated_at). */
  async function plan(reader: StoreReader, agentId: string, input: Input<'ImportInput'>, at: Date) {
    const now = at.toISOString();
    const lines = [...input.ndjson].sort((a, b) =>
      (iso(a.updated_at) ?? now).localeCompare(iso(b.updated_at) ?? now),
    );
    const steps: {
      line: Line;
      outcome: Outcome;
      existing: Memory | undefined;
      content: ReturnType<typeof contentOf>;
    }[] = [];
    // Every line's memory in one read.
    const keys = [...new Set(lines.map((l) => l.memory_key))];
    const stored = new Map((await reader.getMemories(agentId, keys)).map((m) => [m.key, m]));
    for (const line of lines) {
      const content = contentOf(line, at);
      const existing = live(stored.get(line.memory_key), now);
      let outcome: Outcome;
      if (content.expiresAt !== undefined && content.expiresAt <= now) outcome = 'expired';
      else if (!existing) outcome = 'created';
      else if (sameContent(existing, content)) outcome = 'unchanged';
      else if (input.policy === 'skip') outcome = 'skipped';
      else if (input.policy === 'if_newer' && !((iso(line.updated_at) ?? now) > existing.updatedAt))
        outcome = 'skipped';
      else outcome = 'updated';
      steps.push({ line, outcome, existing, content });
    }
    const created = steps.filter((step) => step.outcome === 'created').length;
    if (created > 0) {
      const held = await reader.countMemories(agentId, now);
      if (held + created > limits.memoriesPerAgent) throw importQuotaExceeded(created, held);
    }
    return steps;
  }

  function importQuotaExceeded(created: number, held: number): AppError {
    return new AppError(
      'quota_exceeded',
      `The import would create ${created} memories; this agent holds ${held} of the ${limits.memoriesPerAgent} ` +
        'allowed. Nothing was imported or charged: delete memories you no longer need, or import fewer.',
      { memories_limit: limits.memoriesPerAgent },
    );
  }

  function counts(steps: { outcome: Outcome }[]) {
    const of = (outcome: Outcome) => steps.filter((step) => step.outcome === outcome).length;
    return {
      lines: steps.length,
      created: of('created'),
      updated: of('updated'),
      unchanged: of('unchanged'),
      skipped: of('skipped'),
      expired: of('expired'),
    };
  }

  async function importMemories(
    agentId: string,
    input: Input<'ImportInput'>,
    { charge: price, record }: ChargeContext,
  ): Promise<Output<'ImportOutput'>> {
    const priceOf = (steps: { outcome: Outcome }[]) =>
      price.cents * steps.filter((step) => step.outcome === 'created' || step.outcome === 'updated').length;
    if (input.dry_run) {
      const at = clock.now();
      const steps = await store.read((reader) => plan(reader, agentId, input, at));
      const answer = {
        success: true as const,
        dry_run: true,
        policy: input.policy,
        ...counts(steps),
        price_cents: priceOf(steps),
        cost_cents: 0,
        credit_balance_cents: 0,
      };
      // Free; with an idempotency key its answer is kept for replays, as every other answer is.
      if (record?.idempotencyKey !== undefined) {
        return ledger.chargeAnswer(agentId, { cents: 0, operation: price.operation }, record, answer);
      }
      const account = await store.read((reader) => reader.getAccount(agentId));
      return { ...answer, credit_balance_cents: account?.balanceCents ?? 0 };
    }
    const planned: ImportPlanner = async (reader, at) => {
      const steps = await plan(reader, agentId, input, at);
      const cents = priceOf(steps);
      const items: ImportItem[] = steps
        .filter((step) => step.outcome === 'created' || step.outcome === 'updated')
        .map(({ line, existing, content }) => ({
          key: line.memory_key,
          ...content,
          plannedVersion: existing?.version ?? null,
          kept: {
            ...(line.created_at === undefined ? {} : { createdAt: iso(line.created_at) }),
            ...(line.updated_at === undefined ? {} : { updatedAt: iso(line.updated_at) }),
            ...(line.version === undefined ? {} : { version: line.version }),
          },
        }));
      const answer = {
        success: true as const,
        dry_run: false,
        policy: input.policy,
        ...counts(steps),
        price_cents: cents,
        cost_cents: cents,
        credit_balance_cents: 0,
      };
      return { items, cents, answer };
    };
    const done = await charged.importLines(
      agentId,
      planned,
      { cents: 0, operation: price.operation },
      record,
      importQuotaExceeded,
    );
    semantic?.written(agentId, done.written);
    return { ...(done.answer as Output<'ImportOutput'>), credit_balance_cents: done.balanceCents };
  }

  return { exportMemories, importMemories };
}

export type MemoryTransfer = ReturnType<typeof createMemoryTransfer>;
