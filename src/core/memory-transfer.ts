/**
 * Moving an agent's memories out and in. Export reads them in key order, a page at a time, as NDJSON lines
 * (free: it reads what the agent already paid to store). Import plans every line against the agent's live
 * memories (created, updated, unchanged, skipped by the policy, expired), then writes the plan in one
 * transaction charged per memory written, or refuses the whole of it; a dry run answers the plan, free.
 */
import type { ChargeStatements, ImportItem } from './charge-port.js';
import type { Clock } from './clock.js';
import { AppError } from './errors.js';
import type { ChargeContext, Ledger, Recorder } from './ledger.js';
import type { Limits } from './limits.js';
import { pagesByKey } from './memory-pages.js';
import { expiryOf } from './memory-rules.js';
import { writeRules } from './memory-statements.js';
import { toMemoryView } from './memory-views.js';
import { createMemoryWrites, live } from './memory-writes.js';
import type { Memory } from './model.js';
import type { Input, Output } from './schemas.js';
import type { SemanticIndex } from './semantic-index.js';
import type { StorePort, StoreReader, StoreTx } from './store-port.js';

/** Memories read per page of an export. */
const EXPORT_PAGE = 500;
/** Plans an import makes before it leaves a busy agent's memories to the transaction path. */
const IMPORT_PLANS = 3;
/**
 * The most lines an import writes in one statement; a larger one takes the transaction path, where each of its
 * statements has the statement timeout to itself (one statement writing thousands of memories could outlast it).
 */
const IMPORT_STATEMENT_LINES = 1000;

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
  const { writeMemory } = createMemoryWrites(limits);

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
      JSON.stringify(memory.metadata) === JSON.stringify(content.metadata) &&
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
    // Every line's memory in one read where the store can (a database), else key by key.
    const stored = reader.getMemories
      ? new Map(
          (await reader.getMemories(agentId, [...new Set(lines.map((l) => l.memory_key))])).map((m) => [
            m.key,
            m,
          ]),
        )
      : undefined;
    for (const line of lines) {
      const content = contentOf(line, at);
      const existing = live(
        stored ? stored.get(line.memory_key) : await reader.getMemory(agentId, line.memory_key),
        now,
      );
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
      const account = await store.read((reader) => reader.getAccount(agentId));
      return {
        success: true,
        dry_run: true,
        policy: input.policy,
        ...counts(steps),
        price_cents: priceOf(steps),
        cost_cents: 0,
        credit_balance_cents: account?.balanceCents ?? 0,
      };
    }
    if (store.charges && ledger.inOneStatement(record) && input.ndjson.length <= IMPORT_STATEMENT_LINES) {
      const done = await importInOneStatement(store.charges, agentId, input, price, record);
      if (done) return done;
    }
    let written: Memory[] = [];
    const answer = await ledger.runCharged(
      agentId,
      (steps) => ({ cents: priceOf(steps), operation: price.operation }),
      async (tx: StoreTx) => {
        const at = clock.now();
        const steps = await plan(tx, agentId, input, at);
        written = [];
        for (const { line, outcome, existing, content } of steps) {
          if (outcome !== 'created' && outcome !== 'updated') continue;
          const memory = await writeMemory(tx, agentId, line.memory_key, content, existing, at, {
            ...(line.created_at === undefined ? {} : { createdAt: iso(line.created_at) }),
            ...(line.updated_at === undefined ? {} : { updatedAt: iso(line.updated_at) }),
            ...(line.version === undefined ? {} : { version: line.version }),
          });
          written.push(memory);
        }
        return steps;
      },
      (steps, account) => ({
        success: true as const,
        dry_run: false,
        policy: input.policy,
        ...counts(steps),
        price_cents: priceOf(steps),
        cost_cents: priceOf(steps),
        credit_balance_cents: account.balanceCents,
      }),
      record,
    );
    semantic?.written(agentId, written);
    return answer;
  }

  /**
   * The import as one statement (charge-port.ts): planned on a read, written by the statement if no planned
   * memory changed since (else planned again, a few times, then undefined: the transaction path takes it).
   */
  async function importInOneStatement(
    charges: ChargeStatements,
    agentId: string,
    input: Input<'ImportInput'>,
    price: ChargeContext['charge'],
    record: Recorder | undefined,
  ): Promise<Output<'ImportOutput'> | undefined> {
    for (let attempt = 0; attempt < IMPORT_PLANS; attempt++) {
      const request = ledger.chargeRequest(agentId, { cents: 0, operation: price.operation }, record);
      const at = new Date(request.at);
      const steps = await store.read((reader) => plan(reader, agentId, input, at));
      const cents =
        price.cents * steps.filter((s) => s.outcome === 'created' || s.outcome === 'updated').length;
      const answer = {
        success: true as const,
        dry_run: false,
        policy: input.policy,
        ...counts(steps),
        price_cents: cents,
        cost_cents: cents,
        credit_balance_cents: 0,
      };
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
      const outcome = await charges.importMemories({ ...request, cents }, items, writeRules(limits), answer);
      if (outcome.refused === 'stale') continue;
      if (outcome.refused === 'import_quota_exceeded')
        throw importQuotaExceeded(outcome.created, outcome.held);
      if (outcome.refused !== undefined) throw ledger.refusalError(outcome, cents);
      semantic?.written(agentId, outcome.written);
      return { ...answer, credit_balance_cents: outcome.balanceCents };
    }
    return undefined;
  }

  return { exportMemories, importMemories };
}

export type MemoryTransfer = ReturnType<typeof createMemoryTransfer>;
