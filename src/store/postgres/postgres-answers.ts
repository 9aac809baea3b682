/**
 * Templates of the answers that the charge functions (migration 0009) keep for a request's idempotency key:
 * the service's own answer (src/core/memory-answers.ts, or one the core built before the statement) written
 * with marks where the statement's values go, its JSON text cut at them; the function fills them (`ac_fill`)
 * with its values as JSON text. So the record holds the answer byte for byte as the service sends it, with no
 * second definition of an answer in SQL.
 *
 * A mark is a string: U+0001, this process's nonce, then the name of the value it stands for (`balance`,
 * `memory.value`, `results.0.created`: the names ac_memory_values and the functions give). Only the service's
 * own marks are cut: a caller's text that looked like one would need the nonce.
 */
import { randomBytes } from 'node:crypto';
import {
  batchAnswer,
  historyAnswer,
  restoreAnswer,
  retrieveAnswer,
  storedAnswer,
} from '../../core/memory-answers.js';
import { toVersionView } from '../../core/memory-views.js';
import type { Memory, MemoryVersion } from '../../core/model.js';

export interface AnswerTemplate {
  parts: string[];
  codes: string[];
}

const NONCE = randomBytes(9).toString('base64url');
/** A mark's JSON text: `"\u0001<nonce><code>"`. */
const MARK = new RegExp(`"\\\\u0001${NONCE}([^"\\\\]*)"`, 'gu');

/** The mark of the value named `name`. */
function mark<T = string>(name: string): T {
  return `\u0001${NONCE}${name}` as T;
}

/** `answer`'s JSON text cut at its marks. */
export function templateOf(answer: unknown): AnswerTemplate {
  const text = JSON.stringify(answer);
  const parts: string[] = [];
  const codes: string[] = [];
  let from = 0;
  for (const found of text.matchAll(MARK)) {
    parts.push(text.slice(from, found.index));
    codes.push(found[1] as string);
    from = found.index + found[0].length;
  }
  parts.push(text.slice(from));
  return { parts, codes };
}

/** An answer with its `credit_balance_cents` as the statement sets it. */
export function withBalance(answer: object): AnswerTemplate {
  return templateOf({ ...answer, credit_balance_cents: mark('balance') });
}

/** A memory whose every field is the mark of the memory's value named `<prefix>.<field>`. */
function markedMemory(prefix: string): Memory {
  const at = <T = string>(field: string) => mark<T>(`${prefix}.${field}`);
  return {
    agentId: '',
    key: at('key'),
    value: at('value'),
    type: at<Memory['type']>('type'),
    metadata: at<Memory['metadata']>('metadata'),
    createdAt: at('created_at'),
    updatedAt: at('updated_at'),
    version: at<number>('version'),
    expiresAt: at('expires_at'),
  };
}

const BALANCE = mark<number>('balance');
const cache = new Map<string, AnswerTemplate>();
const cached = (key: string, make: () => AnswerTemplate) => {
  let template = cache.get(key);
  if (template === undefined) {
    template = make();
    cache.set(key, template);
  }
  return template;
};

export function retrieveTemplate(cents: number): AnswerTemplate {
  return cached(`retrieve ${cents}`, () =>
    templateOf(retrieveAnswer(markedMemory('memory'), cents, BALANCE)),
  );
}

/** memory_store's answer (one item), or memory_store_batch's (`count` items). */
export function storeTemplate(cents: number, count: number, batch: boolean): AnswerTemplate {
  const result = (i: number) => ({
    memory: markedMemory(`results.${i}.memory`),
    created: mark<boolean>(`results.${i}.created`),
  });
  if (!batch) {
    const { memory, created } = result(0);
    return cached(`store ${cents}`, () => templateOf(storedAnswer(memory, created, cents, BALANCE)));
  }
  return cached(`batch ${cents} ${count}`, () =>
    templateOf(
      batchAnswer(
        Array.from({ length: count }, (_, i) => result(i)),
        cents,
        BALANCE,
      ),
    ),
  );
}

export function restoreTemplate(cents: number): AnswerTemplate {
  return cached(`restore ${cents}`, () =>
    templateOf(
      restoreAnswer(
        markedMemory('memory'),
        mark<boolean>('created'),
        mark<number>('restored_from'),
        cents,
        BALANCE,
      ),
    ),
  );
}

/** memory_history's answer, and the templates of its entries: a stored version's, a delete's. */
export function historyTemplates(cents: number): {
  answer: AnswerTemplate;
  live: AnswerTemplate;
  deleted: AnswerTemplate;
} {
  const answer = cached(`history ${cents}`, () => {
    // The entries are a list of the history's length: one mark for all of it, each entry filled on its own.
    const entries = { map: () => mark('versions') } as unknown as MemoryVersion[];
    return templateOf(historyAnswer(mark('key'), mark<number>('current'), entries, cents, BALANCE));
  });
  const entry = (deleted: boolean) =>
    cached(`history entry ${deleted}`, () =>
      templateOf(
        toVersionView({
          agentId: '',
          key: '',
          version: mark<number>('version'),
          at: mark('at'),
          ...(deleted
            ? { deleted: true }
            : { value: mark('value'), type: mark('type'), metadata: mark('metadata') }),
        } as MemoryVersion),
      ),
    );
  return { answer, live: entry(false), deleted: entry(true) };
}
