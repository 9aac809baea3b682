/**
 * LoCoMo (Maharana et al., ACL 2024) for `npm run bench:recall`: its conversations read from a file or a
 * directory, each turn as the memory the benchmark stores, each scored question with its evidence, and the
 * scoring (R@k of a question: the share of its evidence turns among the first k results; R@k: the mean over
 * questions, overall and per category).
 *
 * Two layouts are read: one conversation per file, its fields at the top (`../shared/data/locomo-dev`), and
 * the published `locomo10.json` (github.com/snap-research/LoCoMo, `data/locomo10.json`): a list of
 * `{sample_id, conversation: {speaker_a, session_1, …}, qa}`.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export const CATEGORIES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
};
/** The cut-offs scored. */
export const KS = [1, 5, 10, 25] as const;
/** The query is the question's first characters, as the search's limit allows. */
export const QUERY_CHARS = 500;

export interface Turn {
  /** The memory key: the turn's dia_id (`D3:12`). */
  key: string;
  /** `Speaker: text`, then ` [shares <caption>]` when the turn shows an image. */
  value: string;
  session: number;
  date: string;
}

export interface Question {
  text: string;
  category: number;
  /** The dia_ids of the turns that hold the answer. */
  evidence: string[];
}

export interface Conversation {
  id: string;
  turns: Turn[];
  questions: Question[];
  /** Questions of categories 1-4 left out: no evidence id of the form D<n>:<n>. */
  skipped: number;
}

type Raw = Record<string, unknown>;

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface RawQuestion {
  question: string;
  category: number;
  evidence?: string[];
}

/**
 * An evidence id as written (`D3:12`, sometimes `D:3:12` or with spaces) made `D3:12`; undefined if it is not
 * one (one item of conversation 26 holds two ids in one string, `D8:6; D9:17`: left out, as in the issue's
 * figures).
 */
export function evidenceId(written: string): string | undefined {
  const id = written.replace(/\s+/g, '').replace(/^D:/, 'D');
  return /^D\d+:\d+$/.test(id) ? id : undefined;
}

function readConversation(raw: Raw, fallbackId: string): Conversation {
  const body = (raw.conversation ?? raw) as Raw;
  const id = String(raw.sample_id ?? fallbackId);
  const turns: Turn[] = [];
  const sessions = Object.keys(body)
    .map((name) => /^session_(\d+)$/.exec(name))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => Number(match[1]))
    .sort((a, b) => a - b);
  for (const session of sessions) {
    const date = String(body[`session_${session}_date_time`] ?? '');
    for (const turn of body[`session_${session}`] as RawTurn[]) {
      const caption = turn.blip_caption ? ` [shares ${turn.blip_caption}]` : '';
      turns.push({ key: turn.dia_id, value: `${turn.speaker}: ${turn.text}${caption}`, session, date });
    }
  }
  const questions: Question[] = [];
  let skipped = 0;
  for (const qa of (raw.qa ?? []) as RawQuestion[]) {
    if (!(qa.category in CATEGORIES)) continue;
    const evidence = [
      ...new Set((qa.evidence ?? []).map(evidenceId).filter((e): e is string => e !== undefined)),
    ];
    if (evidence.length === 0) {
      skipped++;
      continue;
    }
    questions.push({ text: qa.question.slice(0, QUERY_CHARS), category: qa.category, evidence });
  }
  return { id, turns, questions, skipped };
}

/** The conversations of a LoCoMo file (one conversation or a list) or of every .json file in a directory. */
export function loadLocomo(where: string): Conversation[] {
  const files = statSync(where).isDirectory()
    ? readdirSync(where)
        .filter((name) => name.endsWith('.json'))
        .sort()
        .map((name) => path.join(where, name))
    : [where];
  const out: Conversation[] = [];
  for (const file of files) {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Raw | Raw[];
    const base = path.basename(file, '.json');
    if (!Array.isArray(parsed)) out.push(readConversation(parsed, base));
    else for (const [i, raw] of parsed.entries()) out.push(readConversation(raw, `${base}-${i}`));
  }
  return out;
}

/** One question's result: its category, the R@k for each k, and how long the search took. */
export interface Scored {
  category: number;
  recall: number[];
  ms: number;
}

/** R@k for each of KS: the share of `evidence` among the first k of `ranked`. */
export function recallAt(ranked: readonly string[], evidence: readonly string[]): number[] {
  return KS.map((k) => {
    const top = new Set(ranked.slice(0, k));
    return evidence.filter((id) => top.has(id)).length / evidence.length;
  });
}

export interface Row {
  label: string;
  n: number;
  /** Percentages, one per k of KS. */
  recall: number[];
}

/** Overall and per category: the mean R@k in percent. */
export function summarize(scored: readonly Scored[]): Row[] {
  const row = (label: string, items: readonly Scored[]): Row => ({
    label,
    n: items.length,
    recall: KS.map((_, i) =>
      items.length === 0
        ? 0
        : (100 * items.reduce((sum, s) => sum + (s.recall[i] as number), 0)) / items.length,
    ),
  });
  return [
    row('all (categories 1-4)', scored),
    ...Object.entries(CATEGORIES).map(([category, name]) =>
      row(
        name,
        scored.filter((s) => s.category === Number(category)),
      ),
    ),
  ];
}
