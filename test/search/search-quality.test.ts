/**
 * Search quality: a fixed corpus of about 300 realistic memories (test/fixtures/search-corpus.json), loaded
 * into every store adapter for one agent, and a table of ranked queries with what a person would expect of
 * them: the exact key first, identifiers found, stems matched, the memory holding every word of the query
 * near the top, conditions honoured, stop words and absent words finding nothing. The expectations are the
 * same for every store; where the stores' rankings may rightly differ (BM25+ in the JSON store, ts_rank in
 * PostgreSQL: no inverse document frequency and no length normalisation there), a case asks for membership
 * of a top N rather than an order, and says why.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Account,
  type JsonObject,
  MEMORY_TYPES,
  type Memory,
  type MemoryType,
} from '../../src/core/model.js';
import { keyTier } from '../../src/core/search-text.js';
import type { StorePort } from '../../src/core/store-port.js';
import type { MemoryPage, MemoryQuery } from '../../src/core/store-reader.js';
import { createMemoryStore } from '../../src/store/json/json-store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { testDatabase } from '../helpers/postgres.js';

interface CorpusEntry {
  key: string;
  value: string;
  type: MemoryType;
  metadata: JsonObject;
}

function loadCorpus(): CorpusEntry[] {
  const parsed: unknown = JSON.parse(
    readFileSync(new URL('../fixtures/search-corpus.json', import.meta.url), 'utf8'),
  );
  if (!Array.isArray(parsed)) throw new Error('search-corpus.json: not an array');
  for (const entry of parsed as CorpusEntry[]) {
    if (
      typeof entry.key !== 'string' ||
      typeof entry.value !== 'string' ||
      !MEMORY_TYPES.includes(entry.type) ||
      typeof entry.metadata !== 'object' ||
      entry.metadata === null
    ) {
      throw new Error(`search-corpus.json: malformed entry ${JSON.stringify(entry).slice(0, 80)}`);
    }
  }
  return parsed as CorpusEntry[];
}

const corpus = loadCorpus();
const AGENT = 'agent-alex';
const OTHER = 'agent-other';
const START = Date.parse('2026-03-01T09:00:00.000Z');
/** One second apart, in file order: the later an entry in the file, the more recently it was updated. */
const at = (second: number) => new Date(START + second * 1000).toISOString();
/** Later than every memory's timestamp (none of them expires). */
const LIVE_AT = at(100_000);
/** More than the corpus holds, so that every answer is one page and `total` is its length. */
const LIMIT = 1000;

/** Another agent's memories: same keys and words as the first agent's, and words of their own. */
const otherAgentEntries: CorpusEntry[] = [
  {
    key: 'project.apollo.deploy-checklist',
    value: 'Apollo deploy checklist of another agent: must never be found for agent-alex.',
    type: 'workflow',
    metadata: { project: 'apollo', tags: ['deploy', 'checklist'] },
  },
  {
    key: 'incident/INC-4521',
    value: 'INC-4521 of another agent: the kraken ate the staging database.',
    type: 'fact',
    metadata: { project: 'apollo', severity: 1 },
  },
  {
    key: 'pref.timezone',
    value: 'Another agent lives in Auckland (Pacific/Auckland).',
    type: 'preference',
    metadata: { pinned: true },
  },
  {
    key: 'note/kraken',
    value: 'Kraken exchange API keys are rotated monthly; the voice memo about Zürich is elsewhere.',
    type: 'context',
    metadata: { source: 'voice-memo' },
  },
];

const account = (id: string): Account => ({
  id,
  email: `${id}@example.com`,
  name: null,
  plan: 'pay-as-you-go',
  keyHash: `hash-${id}`,
  balanceCents: 50,
  createdAt: at(-1),
});

const toMemory = (agentId: string, entry: CorpusEntry, second: number): Memory => ({
  agentId,
  key: entry.key,
  value: entry.value,
  type: entry.type,
  metadata: entry.metadata,
  createdAt: at(second),
  updatedAt: at(second),
  version: 1,
});

async function load(store: StorePort): Promise<void> {
  await store.transact(async (tx) => {
    await tx.putAccount(account(AGENT));
    await tx.putAccount(account(OTHER));
  });
  await store.transact(async (tx) => {
    for (const [i, entry] of corpus.entries()) await tx.putMemory(toMemory(AGENT, entry, i));
    // Interleaved in time with the first agent's memories, and newer than most of them.
    for (const [i, entry] of otherAgentEntries.entries()) {
      await tx.putMemory(toMemory(OTHER, entry, corpus.length - 10 + i));
    }
  });
}

interface Case {
  name: string;
  query: Omit<MemoryQuery, 'liveAt' | 'limit'> & { text: string };
  /** The first hits, in this order. */
  first?: string[];
  /** Each of these keys is within the first `n` hits (in any order). */
  within?: { n: number; keys: string[] };
  /** Each of these keys is a hit (anywhere). */
  includes?: string[];
  /** The hits are exactly these keys (in any order); `total` is their number. */
  exactly?: string[];
  /** None of these keys is a hit. */
  excludes?: string[];
  /** None of these keys is within the first `n` hits. */
  notWithin?: { n: number; keys: string[] };
  /** Every hit satisfies this. */
  every?: (memory: Memory) => boolean;
}

const apolloKeys = corpus.map((e) => e.key).filter((key) => key.startsWith('project.apollo.'));

const cases: Case[] = [
  // Exact keys: the key that is the query first, whatever the text rank says; keys holding it next.
  {
    name: 'an exact key is the top hit, a key holding it (the superseded draft) the second',
    query: { text: 'project.apollo.deploy-checklist' },
    first: ['project.apollo.deploy-checklist', 'project.apollo.deploy-checklist-draft'],
    notWithin: { n: 2, keys: ['project.hermes.deploy-checklist'] },
  },
  {
    name: 'the same exact key in other case (ASCII case is ignored)',
    query: { text: 'PROJECT.Apollo.Deploy-Checklist' },
    first: ['project.apollo.deploy-checklist', 'project.apollo.deploy-checklist-draft'],
  },
  {
    name: 'an exact key with blanks around it',
    query: { text: '  pref.timezone \n' },
    first: ['pref.timezone'],
  },
  {
    name: 'a key that is also the start of other keys: the key, then every key holding it',
    query: { text: 'project.apollo' },
    first: ['project.apollo'],
    within: { n: 1 + apolloKeys.length, keys: apolloKeys },
    notWithin: { n: 1 + apolloKeys.length, keys: ['project.hermes', 'project.hermes.deploy-checklist'] },
  },
  {
    name: 'keys holding the word outrank memories that only mention it',
    query: { text: 'checklist' },
    // Six keys hold "checklist" (the key tier); their order among themselves is the text rank's.
    within: {
      n: 6,
      keys: [
        'project.apollo.deploy-checklist',
        'project.apollo.deploy-checklist-draft',
        'project.apollo.beta-checklist',
        'project.apollo.ga-checklist',
        'project.hermes.deploy-checklist',
        'workflow.code-review-checklist',
      ],
    },
    includes: ['workflow.deploy-announcement', 'travel/packing-list'],
  },

  // Identifiers.
  {
    name: 'an incident id finds the incident and the postmortem whose key holds the id first',
    query: { text: 'INC-4521' },
    // Both keys hold the id (the key tier) and both values name it once: ts_rank scores them equal (no
    // length normalisation) and the newer postmortem comes first; BM25+ puts the incident first.
    within: { n: 2, keys: ['incident/INC-4521', 'meeting/2026-02-19-inc-4521-postmortem'] },
    includes: ['ticket/APO-1190', 'contact/dev-patel', 'tech.error-budget', 'note/conversation-dev-burnout'],
    notWithin: { n: 5, keys: ['incident/INC-4512'] },
  },
  {
    name: 'an incident id in lower case',
    query: { text: 'inc-4521' },
    within: { n: 2, keys: ['incident/INC-4521', 'meeting/2026-02-19-inc-4521-postmortem'] }, // as above
  },
  {
    name: 'a transposed incident id finds the other incident, not INC-4521',
    query: { text: 'INC-4512' },
    first: ['incident/INC-4512'],
    notWithin: { n: 1, keys: ['incident/INC-4521'] },
  },
  {
    name: 'the number of an incident id alone finds the incident and every memory citing it',
    query: { text: '4521' },
    within: { n: 2, keys: ['incident/INC-4521', 'meeting/2026-02-19-inc-4521-postmortem'] }, // as above
    // The other four write the id as "INC-4521" in their value, of which "4521" is a word (runs of letters
    // and digits). PostgreSQL's own parser would read "INC-4521" as "inc" and the signed integer "-4521"
    // and find only the two keys holding "4521": both stores index the terms of search-text.ts instead.
    exactly: [
      'incident/INC-4521',
      'meeting/2026-02-19-inc-4521-postmortem',
      'ticket/APO-1190',
      'contact/dev-patel',
      'note/conversation-dev-burnout',
      'tech.error-budget',
    ],
  },
  {
    name: 'a ticket id finds the ticket first and the memories citing it',
    query: { text: 'APO-1182' },
    first: ['ticket/APO-1182'],
    includes: [
      'incident/INC-4550',
      'pref.coding.comments',
      'project.apollo.status',
      'meeting/2026-03-02-apollo-standup',
    ],
  },

  // Stemming.
  {
    name: 'stemming: "deployed" finds memories about deploys, the Apollo deploy checklist near the top',
    query: { text: 'deployed' },
    // No key holds "deployed": text rank only. Several short memories are about deploys; ts_rank puts the
    // checklist (which says "deploy" most often) first, BM25+ (length normalisation) fifth.
    within: { n: 5, keys: ['project.apollo.deploy-checklist'] },
    includes: [
      'project.hermes.deploy-checklist',
      'pref.deploy-window',
      'workflow.deploy-freeze',
      'incident/INC-4521',
      'note/deploy-friday-story',
    ],
  },
  {
    name: 'stemming: "allergies" finds "allergy", not "allergic"',
    query: { text: 'allergies' },
    first: ['pref.food.allergies'], // its key holds the query (the key tier)
    exactly: ['pref.food.allergies', 'health.medication', 'travel/2026-08-japan', 'travel/packing-list'],
    excludes: ['contact/sam'], // "allergic to cats": another stem
  },
  {
    name: 'stemming: "migrating" finds "migration" and "migrations"',
    query: { text: 'migrating' },
    first: ['workflow.database-migration'],
    includes: ['project.apollo.deploy-checklist', 'project.apollo.rollback', 'fact.postgres-version'],
  },

  // Several words: the memory holding all of them first.
  {
    name: 'several words: the memory holding all of them is the top hit',
    query: { text: 'apollo deploy checklist' },
    first: ['project.apollo.deploy-checklist'],
    within: { n: 3, keys: ['project.apollo.deploy-checklist-draft'] },
  },
  {
    name: 'several words: the ticket holding stripe, webhook and idempotent',
    query: { text: 'stripe webhook idempotent' },
    first: ['ticket/APO-1201'],
    includes: ['incident/INC-4538', 'project.apollo.stack'],
  },
  {
    name: 'several words held by two memories: both at the top',
    query: { text: 'kafka consumer lag' },
    // The incident and the Hermes deploy checklist both hold all three words: their order is the stores'.
    // Top 3, not 2, for the JSON store: it ranks learning.kafka-notes first, which lacks "lag" but holds
    // "kafka" in its key (boost 2.5, and a rare word among keys: BM25+ scores each field on its own and
    // has no bonus for holding every word of the query).
    within: { n: 3, keys: ['incident/INC-4498', 'project.hermes.deploy-checklist'] },
    includes: ['learning.kafka-notes'],
  },
  {
    name: 'several words: a recipe by its ingredients',
    query: { text: 'yellow lentils turmeric' },
    first: ['recipe/dal-tadka'],
    exactly: ['recipe/dal-tadka', 'home.recycling'], // "yellow bin for plastic"
  },
  {
    name: 'a question in natural language: its stop words are dropped',
    query: { text: 'When is the Apollo GA deadline?' },
    first: ['project.apollo.deadline'],
  },
  {
    name: 'a rollback runbook by two words of its key and value',
    query: { text: 'rollback apollo' },
    first: ['project.apollo.rollback'],
    includes: ['project.hermes.rollback', 'incident/INC-4521'],
  },
  {
    name: 'a person by first and last name',
    query: { text: 'Maria Lopez' },
    // The contact's key holds both names, weighted most on both stores.
    first: ['contact/maria-lopez'],
    // Top 4, not 3, for the JSON store: it ranks contact/maria-santos ("maria" only, but in its key)
    // third, above project.apollo.people (both names in a long value).
    within: { n: 4, keys: ['project.apollo.people', 'project.hermes.people'] },
    includes: ['contact/maria-santos'], // "maria" alone
  },
  {
    name: 'a word with a non-ASCII letter',
    query: { text: 'Zürich' },
    exactly: ['travel/2026-06-zurich', 'project.orion.people', 'contact/jonas-muller'],
  },
  {
    name: 'a word with a non-ASCII letter, in upper case',
    query: { text: 'ZÜRICH' },
    // The service lowercases the terms: PostgreSQL's to_tsvector would lowercase by the database's
    // LC_CTYPE (C in the test cluster), making "ZÜRICH" "zÜrich", which matches nothing.
    exactly: ['travel/2026-06-zurich', 'project.orion.people', 'contact/jonas-muller'],
  },
  {
    name: 'the words of a dotted key that its value does not repeat',
    query: { text: 'editor theme' },
    // PostgreSQL's parser would read "pref.editor.theme" as one host name; the value ("Solarized Dark in VS
    // Code…") holds neither word.
    first: ['pref.editor.theme'],
  },
  {
    name: 'a word inside a URL',
    query: { text: 'grafana' },
    // project.apollo.dashboards names Grafana only in https://grafana.acme.io/d/…, which PostgreSQL's parser
    // would read as a URL, a host and a path, none of them the word "grafana".
    exactly: ['project.apollo.dashboards', 'tech.monitoring'],
  },

  // Metadata values are searched too, weighted least.
  {
    name: 'words found only in metadata values',
    query: { text: 'voice memo' },
    exactly: [
      'note/idea-cli-for-incidents',
      'note/idea-team-newsletter',
      'note/idea-birthday-sam',
      'note/kids-gifts',
    ],
  },
  {
    name: 'a word in a value outranks the same word only in metadata',
    query: { text: 'jira' },
    first: ['project.apollo.repo'],
    exactly: ['project.apollo.repo', ...corpus.map((e) => e.key).filter((key) => key.startsWith('ticket/'))],
  },

  // Conditions with text.
  {
    name: 'types: only workflows about deploys',
    query: { text: 'deploy', types: ['workflow'] },
    within: { n: 5, keys: ['project.apollo.deploy-checklist', 'project.hermes.deploy-checklist'] },
    excludes: ['incident/INC-4521', 'pref.deploy-window'],
    every: (m) => m.type === 'workflow',
  },
  {
    name: 'types: several at once',
    query: { text: 'lisbon', types: ['preference', 'fact'] },
    includes: ['pref.timezone', 'contact/kenji-watanabe', 'me.address'],
    excludes: ['context.office-days', 'workflow.morning-routine'],
    every: (m) => m.type === 'preference' || m.type === 'fact',
  },
  {
    name: 'metadata equality: deadlines of project apollo only',
    query: { text: 'deadline', metadata: { project: 'apollo' } },
    first: ['project.apollo.deadline'],
    excludes: ['project.hermes.deadline', 'project.atlas.deadline', 'project.zephyr.deadline'],
    every: (m) => m.metadata.project === 'apollo',
  },
  {
    name: 'metadata equality with a number',
    query: { text: 'deploy', metadata: { severity: 1 } },
    exactly: ['incident/INC-4521'],
  },
  {
    name: 'metadata equality with a boolean',
    query: { text: 'Lisbon', metadata: { pinned: true } },
    exactly: ['pref.timezone'],
  },
  {
    name: 'metadata equality compares a whole field: a string never equals an array holding it',
    query: { text: 'deploy', metadata: { tags: 'deploy' } },
    exactly: [],
  },
  {
    name: 'keyPrefix: only incidents about the database',
    query: { text: 'database', keyPrefix: 'incident/' },
    first: ['incident/INC-4521'],
    every: (m) => m.key.startsWith('incident/'),
  },
  {
    name: 'keyPrefix, types and metadata together',
    query: { text: 'vegetarian', keyPrefix: 'recipe/', types: ['fact'], metadata: { spicy: true } },
    exactly: ['recipe/thai-green-curry', 'recipe/green-salsa'],
  },

  // Nothing to find.
  {
    name: 'stop words only find nothing',
    query: { text: 'the of and' },
    exactly: [],
  },
  {
    name: 'a question made of stop words only finds nothing',
    query: { text: 'What is it about?' },
    exactly: [],
  },
  {
    name: 'an absent word finds nothing',
    query: { text: 'zanzibar' },
    exactly: [],
  },
  {
    name: "another agent's words find nothing",
    query: { text: 'kraken' },
    exactly: [],
  },
];

interface Adapter {
  name: string;
  open(): Promise<StorePort>;
}

const adapters: Adapter[] = [
  { name: 'in-memory', open: async () => createMemoryStore() },
  {
    name: 'PostgreSQL',
    open: async () => {
      const { url } = await testDatabase({ label: 'search_quality' });
      return new PostgresStore({ connectionString: url });
    },
  },
];

const keysOf = (page: MemoryPage) => page.hits.map((hit) => hit.memory.key);

for (const adapter of adapters) {
  describe(`search quality: ${adapter.name}`, () => {
    let store: StorePort;
    beforeAll(async () => {
      store = await adapter.open();
      await load(store);
    }, 60_000);
    afterAll(async () => {
      await store?.close();
    });

    const search = (query: Omit<MemoryQuery, 'liveAt'>) =>
      store.read((reader) => reader.queryMemories(AGENT, { liveAt: LIVE_AT, ...query }));

    it('holds the whole corpus for the agent', async () => {
      expect(corpus.length).toBeGreaterThanOrEqual(290);
      expect(new Set(corpus.map((e) => e.key)).size).toBe(corpus.length);
      const all = await search({ limit: LIMIT });
      expect(all.total).toBe(corpus.length);
      expect(keysOf(all).slice(0, 3)).toEqual(
        corpus
          .slice(-3)
          .map((e) => e.key)
          .reverse(),
      );
    });

    for (const c of cases) {
      it(`${c.name}: ${JSON.stringify(c.query)}`, async () => {
        const page = await search({ ...c.query, limit: LIMIT });
        const keys = keysOf(page);

        // Common to every query: one page holds everything, only this agent's memories, each once, the
        // key tiers in order, and every hit meets the conditions.
        expect(page.total).toBe(page.hits.length);
        expect(new Set(keys).size).toBe(keys.length);
        for (const hit of page.hits) {
          expect(hit.memory.agentId).toBe(AGENT);
          expect(hit.memory.value).not.toMatch(/another agent|kraken/i);
          expect(hit.score).toBeTypeOf('number');
          if (c.query.types) expect(c.query.types).toContain(hit.memory.type);
          if (c.query.keyPrefix !== undefined)
            expect(hit.memory.key.startsWith(c.query.keyPrefix)).toBe(true);
          for (const [field, value] of Object.entries(c.query.metadata ?? {})) {
            expect(hit.memory.metadata[field]).toEqual(value);
          }
        }
        const tiers = keys.map((key) => keyTier(key, c.query.text));
        expect(tiers).toEqual([...tiers].sort((a, b) => b - a));

        if (c.first) expect(keys.slice(0, c.first.length)).toEqual(c.first);
        if (c.within) {
          const top = keys.slice(0, c.within.n);
          for (const key of c.within.keys)
            expect(top, `${key} within the first ${c.within.n}`).toContain(key);
        }
        for (const key of c.includes ?? []) expect(keys).toContain(key);
        if (c.exactly) {
          expect([...keys].sort()).toEqual([...c.exactly].sort());
          expect(page.total).toBe(c.exactly.length);
        }
        for (const key of c.excludes ?? []) expect(keys).not.toContain(key);
        if (c.notWithin) {
          const top = keys.slice(0, c.notWithin.n);
          for (const key of c.notWithin.keys) expect(top).not.toContain(key);
        }
        if (c.every) for (const hit of page.hits) expect(c.every(hit.memory), hit.memory.key).toBe(true);
      });
    }

    it('pages of a ranked answer add up to the whole answer', async () => {
      const text = 'deploy apollo';
      const whole = await search({ text, limit: LIMIT });
      expect(whole.total).toBeGreaterThan(20);
      const seen: string[] = [];
      for (let offset = 0; offset < whole.total; offset += 7) {
        const page = await search({ text, limit: 7, offset });
        expect(page.total).toBe(whole.total);
        seen.push(...keysOf(page));
      }
      expect(seen).toEqual(keysOf(whole));
    });

    it('finds every memory of the corpus first by its key, in upper case', async () => {
      for (const entry of corpus) {
        const page = await search({ text: entry.key.toUpperCase(), limit: 1 });
        expect(keysOf(page), entry.key).toEqual([entry.key]);
      }
    });
  });
}
