/**
 * Templates of the answers that the charge functions (migration 0009) keep for a request's idempotency key:
 * the service's own answer (src/core/memory-answers.ts, or one the core built before the statement) written
 * with marks where the statement's result goes, its JSON text cut at them (`ac_fill`). So the record holds the
 * answer byte for byte as the service sends it, with no second definition of an answer in SQL.
 *
 * A mark is a string: U+0001, this process's nonce, then what it stands for, `path|kind` (see ac_fill_value).
 * Only the service's own marks can be cut: a value of a caller's that looked like one would need the nonce.
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
  /** A history's entries (kind `versions`), stored and deleted. */
  live?: AnswerTemplate;
  deleted?: AnswerTemplate;
}

const NONCE = randomBytes(9).toString('base64url');
/** A mark's JSON text: `"\u0001<nonce><code>"`. */
const MARK = new RegExp(`"\\\\u0001${NONCE}([^"\\\\]*)"`, 'gu');

/** The mark for the result's value at `path` (comma-separated), written as `kind`. */
function mark<T = string>(path: string, kind: string): T {
  return `\u0001${NONCE}${path}|${kind}` as T;
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
  return templateOf({ ...answer, credit_balance_cents: mark('balance', 'num') });
}

/** A memory whose every field is a mark into the result's memory at `path`. */
function markedMemory(path: string): Memory {
  const at = <T = string>(field: string, kind: string) => mark<T>(`${path},${field}`, kind);
  return {
    agentId: '',
    key: at('key', 'str'),
    value: at('value', 'hex'),
    type: at<Memory['type']>('type', 'str'),
    metadata: at<Memory['metadata']>('metadata', 'raw'),
    createdAt: at('created_at', 'iso'),
    updatedAt: at('updated_at', 'iso'),
    version: at<number>('version', 'num'),
    expiresAt: at('expires_at', 'iso'),
  };
}

const BALANCE = mark<number>('balance', 'num');
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
    memory: markedMemory(`results,${i},memory`),
    created: mark<boolean>(`results,${i},created`, 'bool'),
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
        mark<boolean>('created', 'bool'),
        mark<number>('restored_from', 'num'),
        cents,
        BALANCE,
      ),
    ),
  );
}

export function historyTemplate(cents: number): AnswerTemplate {
  return cached(`history ${cents}`, () => {
    // The entries are a list of the result's length: one mark for all, each entry by its own template.
    const entries = { map: () => mark('versions', 'versions') } as unknown as MemoryVersion[];
    const entry = (deleted: boolean) =>
      templateOf(
        toVersionView({
          agentId: '',
          key: '',
          version: mark<number>('version', 'num'),
          at: mark('at', 'iso'),
          ...(deleted
            ? { deleted: true }
            : { value: mark('value', 'hex'), type: mark('type', 'str'), metadata: mark('metadata', 'raw') }),
        } as MemoryVersion),
      );
    return {
      ...templateOf(
        historyAnswer(mark('key', 'str'), mark<number>('current', 'num'), entries, cents, BALANCE),
      ),
      live: entry(false),
      deleted: entry(true),
    };
  });
}
