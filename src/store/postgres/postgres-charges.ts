/**
 * The charge port (core/charge-port.ts) of the PostgreSQL store: each charged operation as one statement (issue
 * 32), a call of the operation's function (schema.sql shows their current bodies), sent as a named statement
 * with no BEGIN, which its own implicit transaction commits. The function answers json: the operation's result
 * with the balance after the charge, or a refusal (nothing done). What the core's search terms need is
 * computed here, as for every write of a memory (memory-query-sql.ts): the statement's SEARCH_VECTOR turns
 * them into the search column.
 *
 * Where a statement does not fit, the store runs the operation as a transaction with the core's rules
 * (`fallback`: store/transaction-charges.ts), to the same effect: a store whose item's expiry the core
 * refused (its error comes in order among the items' refusals), a restore whose version keeps changing under
 * it, an import of more than IMPORT_STATEMENT_LINES memories or whose memories keep changing under its plan.
 */

import type pg from 'pg';
import type {
  Charged,
  ChargePort,
  ChargeRefusal,
  ChargeRequest,
  ImportItem,
  ImportPlanner,
  StoreItem,
  WriteRules,
} from '../../core/charge-port.js';
import { AppError } from '../../core/errors.js';
import type { JsonObject, Memory } from '../../core/model.js';
import type { StoreReader } from '../../core/store-reader.js';
import { memoryOf, type StatementRefusal, storeResultsOf, toRefusal, versionOf } from './charge-rows.js';
import { SEARCH_VECTOR, searchTermsOf } from './memory-query-sql.js';
import {
  type AnswerTemplate,
  historyTemplates,
  restoreTemplate,
  retrieveTemplate,
  storeTemplate,
  withBalance,
} from './postgres-answers.js';
import { isUnreachable, unavailable } from './postgres-errors.js';
import { int, type Row, text } from './postgres-rows.js';

/** The charge's fields as the function's `ac_charge` argument, in parameters $1-$15. */
const CHARGE =
  'ROW($1::text, $2::timestamptz, $3::bigint, $4::text, $5::text, $6::text, $7::text, $8::text, $9::text, ' +
  '$10::bigint, $11::bigint, $12::timestamptz, $13::text, $14::text, $15::text)::ac_charge';

/** The search column of each item, from three arrays of term texts ($a, $b, $c), in the items' order. */
const SEARCH_ARRAY = (a: string, b: string, c: string) =>
  `ARRAY(SELECT ${SEARCH_VECTOR('t.k', 't.v', 't.m')} FROM unnest(${a}::text[], ${b}::text[], ${c}::text[]) ` +
  'WITH ORDINALITY AS t(k, v, m, n) ORDER BY t.n)';

/** A template (postgres-answers.ts) as the functions' ac_template argument, in parameters $n and $n+1. */
const TEMPLATE = (n: number) => `ROW($${n}::text[], $${n + 1}::text[])::ac_template`;

const RETRIEVE = `SELECT ac_memory_retrieve(${CHARGE}, $16, $17, ${TEMPLATE(18)}) AS r`;
const STORE_ONE =
  `SELECT ac_memory_store(${CHARGE}, ARRAY[$16::text], ARRAY[$17::bytea], ARRAY[$18::text], ARRAY[$19::text], ` +
  `ARRAY[$20::timestamptz], ARRAY[$21::integer], ARRAY[${SEARCH_VECTOR('$22::text', '$23::text', '$24::text')}], ` +
  `ARRAY[$25::integer], ARRAY[$26::boolean], $27, $28, $29, ${TEMPLATE(30)}) AS r`;
const STORE_MANY =
  `SELECT ac_memory_store(${CHARGE}, $16::text[], $17::bytea[], $18::text[], $19::text[], $20::timestamptz[], ` +
  `$21::integer[], ${SEARCH_ARRAY('$22', '$23', '$24')}, $25::integer[], $26::boolean[], $27, $28, $29, ` +
  `${TEMPLATE(30)}) AS r`;
const HISTORY =
  `SELECT ac_memory_history(${CHARGE}, $16, $17, $18, $19, ${TEMPLATE(20)}, ${TEMPLATE(22)}, ` +
  `${TEMPLATE(24)}) AS r`;
const RESTORE =
  `SELECT ac_memory_restore(${CHARGE}, $16, $17, $18, $19, ` +
  `${SEARCH_VECTOR('$20::text', '$21::text', '$22::text')}, $23, $24, $25, ${TEMPLATE(26)}) AS r`;
const IMPORT =
  `SELECT ac_memory_import(${CHARGE}, $16::text[], $17::bytea[], $18::text[], $19::text[], $20::timestamptz[], ` +
  `$21::integer[], ${SEARCH_ARRAY('$22', '$23', '$24')}, $25::integer[], $26::timestamptz[], ` +
  `$27::timestamptz[], $28::integer[], $29, $30, $31, ${TEMPLATE(32)}) AS r`;
const CHARGE_ONLY = `SELECT ac_charge_only(${CHARGE}, ${TEMPLATE(16)}) AS r`;
/** The history of a key as a restore reads it before its statement, for the restored version's search terms. */
const RESTORE_READ =
  'SELECT at, value, metadata, deleted FROM memory_history WHERE agent_id = $1 AND key = $2 AND version = $3';

/** SQLSTATEs the functions raise: a claim lost to another request, a batch's later item refused. */
const CLAIM_LOST = 'AC409';
const ITEM_REFUSED = 'AC422';
/** Reads a restore makes when its version changes under it, before it leaves it to the transaction path. */
const RESTORE_READS = 3;
/** Plans an import makes before it leaves a busy agent's memories to the transaction path. */
const IMPORT_PLANS = 3;
/**
 * The most memories an import writes in one statement; a larger one takes the transaction path, where each of
 * its statements has the statement timeout to itself (one statement writing thousands could outlast it).
 */
const IMPORT_STATEMENT_LINES = 1000;
/**
 * Errors after which the statement is sent again: a deadlock (another writer locked rows of the same agent in
 * another order: a vector save, the sweeper) or a serialization failure. The statement rolled back whole and
 * its claim, if any, is still this request's, so sending it again is safe.
 */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 3;

/** A template's two parameters (NULL without a claim: no record to write). */
function template(answer: AnswerTemplate | undefined): [string[] | null, string[] | null] {
  return answer === undefined ? [null, null] : [answer.parts, answer.codes];
}

function chargeValues(c: ChargeRequest): unknown[] {
  return [
    c.agentId,
    c.at,
    c.cents,
    c.operation,
    c.entryId,
    c.ref.memoryKey ?? null,
    c.ref.queryType ?? null,
    c.ref.query ?? null,
    c.client ?? null,
    c.daily.payAsYouGo ?? null,
    c.daily.unlimited ?? null,
    c.daily.since,
    c.claim?.key ?? null,
    c.claim?.token ?? null,
    c.claim?.fingerprint ?? null,
  ];
}

/** Runs one statement, named (parsed and planned once per connection), with the paying agent's affinity. */
export interface ChargeRunner {
  query(text: string, values: unknown[], affinity?: string): Promise<pg.QueryResult>;
}

/** A statement's answer: the operation's, or `stale` (what it planned on changed since: plan again). */
type Answered<T> = Charged<T> | Exclude<StatementRefusal, ChargeRefusal>;

export class PostgresCharges implements ChargePort {
  constructor(
    private readonly db: ChargeRunner,
    /** The operations as transactions of this store, for what a statement does not take. */
    private readonly fallback: ChargePort,
    /** Reads outside a transaction, for an import's plan. */
    private readonly read: <T>(work: (reader: StoreReader) => Promise<T>) => Promise<T>,
  ) {}

  async retrieveMemory(charge: ChargeRequest, key: string, refresh: boolean) {
    const answer = charge.claim && retrieveTemplate(charge.cents);
    return this.settled(
      this.call(RETRIEVE, [...chargeValues(charge), key, refresh, ...template(answer)], (r) => ({
        memory: memoryOf(charge.agentId, r.memory as Row),
      })),
    );
  }

  async storeMemories(charge: ChargeRequest, items: readonly StoreItem[], rules: WriteRules) {
    // A refused expiry fails the operation in order among the items' other refusals: the transaction's.
    if (items.some((item) => item.refusedExpiry !== undefined)) {
      return this.fallback.storeMemories(charge, items, rules);
    }
    const terms = items.map((item) => searchTermsOf(item));
    const one = items.length === 1;
    const column = <T>(of: (item: StoreItem, i: number) => T) =>
      one ? of(items[0] as StoreItem, 0) : items.map(of);
    const values = [
      ...chargeValues(charge),
      column((item) => item.key),
      column((item) => Buffer.from(item.value, 'utf8')),
      column((item) => item.type),
      column((item) => JSON.stringify(item.metadata)),
      column((item) => item.expiresAt ?? null),
      column((item) => item.ttlSeconds ?? null),
      column((_, i) => (terms[i] as string[])[0]),
      column((_, i) => (terms[i] as string[])[1]),
      column((_, i) => (terms[i] as string[])[2]),
      column((item) => item.expectedVersion ?? null),
      column((item) => item.createOnly === true),
      rules.quota,
      rules.keep,
      rules.retentionSeconds,
      ...template(
        charge.claim && storeTemplate(charge.cents, items.length, charge.operation === 'memory_store_batch'),
      ),
    ];
    return this.settled(
      this.call(one ? STORE_ONE : STORE_MANY, values, (r) => ({
        results: storeResultsOf(charge.agentId, r),
      })),
    );
  }

  async memoryHistory(charge: ChargeRequest, key: string, limit: number, rules: WriteRules) {
    const answer = charge.claim && historyTemplates(charge.cents);
    const values = [
      ...chargeValues(charge),
      key,
      limit,
      rules.keep,
      rules.retentionSeconds,
      ...template(answer?.answer),
      ...template(answer?.live),
      ...template(answer?.deleted),
    ];
    return this.settled(
      this.call(HISTORY, values, (r) => ({
        currentVersion: r.current === null ? null : int(r.current),
        versions: (r.versions as Row[]).map((h) => versionOf(charge.agentId, key, h)),
      })),
    );
  }

  async restoreMemory(
    charge: ChargeRequest,
    restore: { key: string; version: number; expectedVersion?: number },
    rules: WriteRules,
  ): Promise<Charged<{ memory: Memory; created: boolean }>> {
    for (let read = 1; read <= RESTORE_READS; read++) {
      // The version's content as it stands, for its search terms; the statement checks it is still so.
      const { rows } = await this.db
        .query(RESTORE_READ, [charge.agentId, restore.key, restore.version], charge.agentId)
        .catch((err: unknown) => {
          throw isUnreachable(err) ? unavailable(err) : err;
        });
      const entry = rows[0] as Row | undefined;
      const terms =
        entry && entry.deleted !== true && entry.value !== null
          ? searchTermsOf({
              key: restore.key,
              value: text(entry.value),
              metadata: (entry.metadata ?? {}) as JsonObject,
            })
          : [null, null, null];
      const values = [
        ...chargeValues(charge),
        restore.key,
        restore.version,
        restore.expectedVersion ?? null,
        entry ? entry.at : null,
        ...terms,
        rules.quota,
        rules.keep,
        rules.retentionSeconds,
        ...template(charge.claim && restoreTemplate(charge.cents)),
      ];
      const outcome = await this.call(RESTORE, values, (r) => ({
        memory: memoryOf(charge.agentId, r.memory as Row),
        created: r.created === true,
      }));
      if (outcome.refused !== 'stale') return outcome;
    }
    // Its version kept changing under it: a transaction takes it.
    return this.fallback.restoreMemory(charge, restore, rules);
  }

  /**
   * An import planned on a read, written by one statement if no planned memory changed since (else planned
   * again, a few times); a large one, or one whose memories keep changing, as a transaction.
   */
  async importMemories(charge: ChargeRequest, plan: ImportPlanner, rules: WriteRules) {
    const at = new Date(charge.at);
    for (let attempt = 0; attempt < IMPORT_PLANS; attempt++) {
      const planned = await this.read((reader) => plan(reader, at));
      if (planned.items.length > IMPORT_STATEMENT_LINES) break;
      const outcome = await this.importPlanned(
        { ...charge, cents: planned.cents },
        planned.items,
        rules,
        planned.answer,
      );
      if (outcome.refused !== 'stale') return outcome;
    }
    return this.fallback.importMemories(charge, plan, rules);
  }

  private importPlanned(
    charge: ChargeRequest,
    items: readonly ImportItem[],
    rules: WriteRules,
    answer: JsonObject,
  ) {
    const terms = items.map((item) => searchTermsOf(item));
    const values = [
      ...chargeValues(charge),
      items.map((item) => item.key),
      items.map((item) => Buffer.from(item.value, 'utf8')),
      items.map((item) => item.type),
      items.map((item) => JSON.stringify(item.metadata)),
      items.map((item) => item.expiresAt ?? null),
      items.map((item) => item.ttlSeconds ?? null),
      terms.map((t) => t[0]),
      terms.map((t) => t[1]),
      terms.map((t) => t[2]),
      items.map((item) => item.plannedVersion),
      items.map((item) => item.kept.createdAt ?? null),
      items.map((item) => item.kept.updatedAt ?? null),
      items.map((item) => item.kept.version ?? null),
      rules.quota,
      rules.keep,
      rules.retentionSeconds,
      ...template(charge.claim && withBalance(answer)),
    ];
    return this.call(IMPORT, values, (r) => ({
      written: (r.written as Row[]).map((m) => memoryOf(charge.agentId, m)),
      answer,
    }));
  }

  async charge(charge: ChargeRequest, answer: JsonObject): Promise<Charged<object>> {
    const values = [...chargeValues(charge), ...template(charge.claim && withBalance(answer))];
    return this.settled(this.call(CHARGE_ONLY, values, () => ({})));
  }

  /** The answer of a statement that plans on nothing read before it: it is never stale. */
  private async settled<T>(answered: Promise<Answered<T>>): Promise<Charged<T>> {
    const outcome = await answered;
    if (outcome.refused === 'stale') throw new AppError('internal', 'A charge statement answered stale.');
    return outcome;
  }

  /** Runs one function call; its answer as the result (with the balance) or the refusal. */
  private async call<T extends object>(
    text: string,
    values: unknown[],
    result: (r: Row) => T,
  ): Promise<Answered<T>> {
    let r: Row;
    for (let attempt = 1; ; attempt++) {
      try {
        const { rows } = await this.db.query(text, values, values[0] as string);
        r = (rows[0] as Row).r as Row;
        break;
      } catch (err) {
        // A batch's later item refused: the statement rolled back, and the refusal is the batch's.
        const { code, detail } = err as { code?: unknown; detail?: unknown };
        if (code === ITEM_REFUSED && typeof detail === 'string') return toRefusal(JSON.parse(detail));
        if (attempt < MAX_ATTEMPTS && typeof code === 'string' && RETRYABLE.has(code)) continue;
        throw failure(err);
      }
    }
    if (typeof r.refused === 'string') return toRefusal(r);
    return { ...result(r), balanceCents: int(r.balance) };
  }
}

/** What a failed call becomes: a lost claim, a database out of reach. */
function failure(err: unknown): unknown {
  if ((err as { code?: unknown }).code === CLAIM_LOST) {
    return new AppError(
      'idempotency_in_progress',
      'This request took too long and another request with the same idempotency key took over; ' +
        'nothing was charged for this one. Retry with the same key to get that request’s response.',
      { field: 'idempotency_key' },
    );
  }
  // Sent and then cut off: the statement may have committed.
  return isUnreachable(err) ? unavailable(err, true) : err;
}
