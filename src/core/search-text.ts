/**
 * The text rules of ranked memory search, shared by every store and by the answer's snippets: words are runs
 * of letters and digits, lowercased; English stop words are dropped and the rest stemmed (Porter2, the
 * Snowball English stemmer), so "launched" finds "launch". Both stores index these terms, computed here:
 * the JSON store's index (memory-search-index.ts) directly, PostgreSQL as text its 'simple' configuration keeps
 * as it is, so that PostgreSQL's own parser (which keeps host names, paths and "INC-4521" whole) never
 * decides what a word is.
 */
import { stem } from 'porter2';
import type { JsonObject } from './model.js';

/** PostgreSQL's english.stop (Snowball's English stop words), so that both stores drop the same words. */
const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers ' +
    'herself it its itself they them their theirs themselves what which who whom this that these those am is ' +
    'are was were be been being have has had having do does did doing a an the and but if or because as until ' +
    'while of at by for with about against between into through during before after above below to from up ' +
    'down in out on off over under again further then once here there when where why how all any both each few ' +
    'more most other some such no nor not only own same so than too very s t can will just don should now'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
const ASCII_LETTERS = /^[a-z]+$/;

/** The words of a text, lowercased, in order, stop words included (a tokenizer). */
export function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

/** Terms already computed, by word (null for a stop word): a vocabulary repeats, and a lookup is cheaper. */
const TERMS = new Map<string, string | null>();
const TERMS_KEPT = 50_000;
/**
 * Words longer than this are not kept: V8 makes a cut of 13 characters or more a view into the whole text
 * it was cut from, so keeping one would keep the whole value (and every value an agent ever wrote, up to
 * TERMS_KEPT of them) in memory. Shorter cuts are copies.
 */
const LONGEST_KEPT = 12;

/** A lowercased word as the index holds it: null for a stop word, else its stem (ASCII words) or itself. */
export function termOf(word: string): string | null {
  let term = TERMS.get(word);
  if (term === undefined) {
    term = STOP_WORDS.has(word) ? null : ASCII_LETTERS.test(word) ? stem(word) : word;
    if (word.length > LONGEST_KEPT) return term;
    // Bounded: past the limit it starts again, rather than keep every word an agent ever wrote.
    if (TERMS.size >= TERMS_KEPT) TERMS.clear();
    TERMS.set(word, term);
  }
  return term;
}

/**
 * `text` as a string of its own: a long cut of a value is a view that keeps the whole value in memory (see
 * LONGEST_KEPT), so what is kept for long (an index's terms) is copied first.
 */
export function ownString(text: string): string {
  return text.length > LONGEST_KEPT ? text.split('').join('') : text;
}

/**
 * The terms of a text, in order and repeated as they occur, joined by spaces: what a store indexes. Every
 * term is a run of letters and digits, so a database's own parser reads each back as one word.
 */
export function termText(text: string): string {
  const out: string[] = [];
  for (const word of words(text)) {
    const term = termOf(word);
    if (term !== null) out.push(term);
  }
  return out.join(' ');
}

/** The distinct terms of a query, in order. */
export function queryTerms(query: string): string[] {
  const out = new Set<string>();
  for (const word of words(query)) {
    const term = termOf(word);
    if (term !== null) out.add(term);
  }
  return [...out];
}

/** The text of a memory's metadata that search reads: every string, number and boolean in it, at any depth. */
export function metadataText(metadata: JsonObject): string {
  const out: string[] = [];
  const stack: unknown[] = [metadata];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') out.push(value);
    else if (typeof value === 'number' || typeof value === 'boolean') out.push(String(value));
    else if (value !== null && typeof value === 'object') stack.push(...Object.values(value).reverse());
  }
  return out.join(' ');
}

/** Lowercases ASCII letters only, as PostgreSQL's lower() does under the keys' "C" collation. */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/**
 * How a key matches a query before any text ranking: 2 when the key is the query (ASCII case ignored), 1 when
 * it holds it, else 0. Keys are identifiers: an agent that names one wants that memory first.
 */
export function keyTier(key: string, query: string): 0 | 1 | 2 {
  return tierOfLowered(asciiLower(key), asciiLower(query.trim()));
}

/** `keyTier` of a key and a query already ASCII-lowercased (the query trimmed), for a caller that keeps them so. */
export function tierOfLowered(lowerKey: string, wanted: string): 0 | 1 | 2 {
  if (wanted === '') return 0;
  if (lowerKey === wanted) return 2;
  return lowerKey.includes(wanted) ? 1 : 0;
}

const SNIPPET_CHARS = 160;
const NON_ASCII = /[\u0080-\uffff]/;
/** Whitespace that `\s+` → " " would change: two in a row, or one that is not a plain space. */
const COLLAPSIBLE = /\s\s|[^\S ]/;

/** A lowercase ASCII letter or a digit: what `WORD` matches in ASCII text, once lowercased. */
function isAsciiWordChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
}

/**
 * A short passage of `value` around the first word matching one of `terms`, the matching words marked
 * **so**, cut at word boundaries with "…"; null when no word of the value matches.
 */
export function snippetOf(value: string, terms: readonly string[]): string | null {
  if (terms.length === 0) return null;
  const wanted = new Set(terms);
  // A stem keeps its word's first letter (Porter2 changes endings only): a word starting otherwise is skipped.
  const initials = new Set(terms.map((term) => term.charCodeAt(0)));
  // Lowercased once, as the index reads it (sliced per word while the lengths agree, as they almost always do).
  const lower = value.toLowerCase();
  const aligned = lower.length === value.length;
  const matches: number[] = [];
  let from = 0;
  let to = value.length;
  /** One word of the value, [start, end); false once past the passage (nothing more is shown). */
  const visit = (start: number, end: number, original: () => string): boolean => {
    if (matches.length > 0 && start >= to) return false;
    if (aligned && !initials.has(lower.charCodeAt(start))) return true;
    const term = termOf(aligned ? lower.slice(start, end) : original().toLowerCase());
    if (term === null || !wanted.has(term)) return true;
    if (matches.length === 0) {
      from = Math.max(0, start - SNIPPET_CHARS / 4);
      to = Math.min(value.length, from + SNIPPET_CHARS);
      from = Math.max(0, Math.min(from, to - SNIPPET_CHARS));
    }
    matches.push(start, end);
    return true;
  };
  if (NON_ASCII.test(value)) {
    WORD.lastIndex = 0;
    for (let match = WORD.exec(value); match !== null; match = WORD.exec(value)) {
      const found = match;
      if (!visit(found.index, found.index + found[0].length, () => found[0])) break;
    }
  } else {
    // ASCII only (most values): a word is a run of [a-z0-9] in the lowercased value, read without a regex.
    for (let i = 0; i < lower.length; ) {
      if (!isAsciiWordChar(lower.charCodeAt(i))) {
        i++;
        continue;
      }
      const start = i;
      while (i < lower.length && isAsciiWordChar(lower.charCodeAt(i))) i++;
      if (!visit(start, i, () => value.slice(start, i))) break;
    }
  }
  if (matches.length === 0) return null;
  const firstStart = matches[0] as number;
  const firstEnd = matches[1] as number;
  // Cut at whitespace, so no word is halved (unless one word is the whole window).
  if (from > 0) {
    const space = value.slice(from, firstStart).search(/\s/);
    if (space >= 0) from += space + 1;
  }
  if (to < value.length) {
    const tail = value.slice(firstEnd, to);
    const space = tail.search(/\s\S*$/);
    if (space >= 0) to = firstEnd + space;
  }
  let out = '';
  let at = from;
  for (let i = 0; i < matches.length; i += 2) {
    const start = matches[i] as number;
    const end = matches[i + 1] as number;
    if (start < from || end > to) continue;
    out += `${value.slice(at, start)}**${value.slice(start, end)}**`;
    at = end;
  }
  out += value.slice(at, to);
  // Runs of whitespace become one space (tested first: replacing costs more than the rest when nothing changes).
  const spaced = COLLAPSIBLE.test(out) ? out.replace(/\s+/g, ' ') : out;
  return `${from > 0 ? '…' : ''}${spaced.trim()}${to < value.length ? '…' : ''}`;
}

/** The most digits of a key's trailing number that count (the rest belong to its stem). */
const NUMBER_DIGITS = 9;

/**
 * The keys next to `key` in a numbered series: the same key with its trailing number one less and one more
 * ("chat/D3:12" → "chat/D3:11", "chat/D3:13"; leading zeros kept: "note-009" → "note-008", "note-010").
 * Turns of a conversation, lines of a log and steps of a plan are stored so; a question is often answered
 * by the memory next to the one that shares its words (the answer after the question). None for a key that
 * does not end in a number. The number is the key's last NUMBER_DIGITS ASCII digits at most (read without a
 * regex: a search asks this of every candidate).
 */
export function neighbourKeys(key: string): string[] {
  let start = key.length;
  while (start > 0 && key.length - start < NUMBER_DIGITS) {
    const code = key.charCodeAt(start - 1);
    if (code < 48 || code > 57) break;
    start--;
  }
  if (start === key.length) return [];
  const stem = key.slice(0, start);
  const digits = key.slice(start);
  const n = Number(digits);
  const width = digits.startsWith('0') ? digits.length : 0;
  const numbered = (m: number) => `${stem}${String(m).padStart(width, '0')}`;
  return n > 0 ? [numbered(n - 1), numbered(n + 1)] : [numbered(n + 1)];
}

/**
 * Whether a word of `text` (as `words` reads it) has its term (`termOf`) in `wanted`; `initials` holds the
 * first UTF-16 code of each wanted term (a stem keeps its word's first letter: a word starting otherwise is
 * skipped without stemming). ASCII text is read without a regex or a lowercased copy.
 */
export function holdsTerm(text: string, wanted: ReadonlySet<string>, initials: ReadonlySet<number>): boolean {
  if (NON_ASCII.test(text)) {
    for (const word of words(text)) {
      if (!initials.has(word.charCodeAt(0))) continue;
      const term = termOf(word);
      if (term !== null && wanted.has(term)) return true;
    }
    return false;
  }
  const length = text.length;
  for (let i = 0; i < length; ) {
    let code = text.charCodeAt(i);
    if (code >= 65 && code <= 90) code += 32;
    if (!isAsciiWordChar(code)) {
      i++;
      continue;
    }
    const start = i;
    const first = code;
    i++;
    while (i < length) {
      const next = text.charCodeAt(i);
      if (!isAsciiWordChar(next >= 65 && next <= 90 ? next + 32 : next)) break;
      i++;
    }
    if (!initials.has(first)) continue;
    const term = termOf(text.slice(start, i).toLowerCase());
    if (term !== null && wanted.has(term)) return true;
  }
  return false;
}
