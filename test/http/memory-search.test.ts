/**
 * memory_search's query, filter and cursor (issue 15), on REST, on both stores (AC_TEST_STORE=postgres runs
 * this file on PostgreSQL), with the service's clock injected. A call with only the spec's fields answers as
 * before (newest first, at most limit), with total and next_cursor besides.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startTestServer, type TestServer } from '../helpers/test-server.js';

const clock = new ManualClock();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ clock });
});
afterAll(async () => {
  await server.close();
});

const store = async (key: string, fields: Record<string, unknown>) => {
  const res = await server.request('POST', '/api/ac/memory', { key, body: { agent_key: key, ...fields } });
  if (res.status !== 200) throw new Error(res.text);
  clock.advance(1_000);
  return res;
};
const search = (key: string, fields: Record<string, unknown> = {}) =>
  server.request('POST', '/api/ac/memory/search', { key, body: { agent_key: key, ...fields } });
const balance = async (key: string) =>
  (await server.request('GET', '/api/ac/account', { key })).body.credit_balance_cents as number;
const keys = (res: { body: { memories: { memory_key: string }[] } }) =>
  res.body.memories.map((m) => m.memory_key);

async function agentWithNotes(): Promise<string> {
  const key = await server.register();
  const notes: [string, string, string, Record<string, unknown>][] = [
    ['project.apollo', 'Apollo is the launch tracker, written in TypeScript.', 'fact', { project: 'apollo' }],
    [
      'deploy/apollo',
      'To deploy Apollo: run the tests, tag, then push to main.',
      'workflow',
      { project: 'apollo' },
    ],
    ['deploy/gemini', 'Gemini deploys itself every night.', 'workflow', { project: 'gemini' }],
    ['user.timezone', 'Europe/Berlin', 'preference', {}],
    [
      'incident/INC-4521',
      'The payment queue stalled; fixed by restarting the worker.',
      'context',
      { severity: 2 },
    ],
    ['lunch', 'Likes ramen on Fridays.', 'preference', { tags: 'food' }],
  ];
  for (const [memory_key, memory_value, memory_type, metadata] of notes) {
    await store(key, { memory_key, memory_value, memory_type, metadata });
  }
  return key;
}

describe('memory_search (REST)', () => {
  it("with only the spec's fields, answers as before: newest first, at most limit, plus total and next_cursor", async () => {
    const key = await agentWithNotes();
    const res = await search(key, { memory_type: 'workflow', limit: 1 });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ success: true, count: 1, total: 2, cost_cents: 1 });
    expect(keys(res)).toEqual(['deploy/gemini']);
    expect(res.body.memories[0]).not.toHaveProperty('score');
    expect(typeof res.body.next_cursor).toBe('string');
    const all = await search(key);
    expect(keys(all)).toEqual([
      'lunch',
      'incident/INC-4521',
      'user.timezone',
      'deploy/gemini',
      'deploy/apollo',
      'project.apollo',
    ]);
    expect(all.body).toMatchObject({ count: 6, total: 6, next_cursor: null });
  });

  it('query ranks by key, then relevance, with a score and a marked snippet; stems match', async () => {
    const key = await agentWithNotes();
    const res = await search(key, { query: 'deployed apollo' });
    expect(res.status, res.text).toBe(200);
    // deploy/apollo holds both words (stemmed: "deployed" finds "deploy"); the others one each.
    expect(keys(res)[0]).toBe('deploy/apollo');
    expect(new Set(keys(res))).toEqual(new Set(['deploy/apollo', 'deploy/gemini', 'project.apollo']));
    expect(res.body.total).toBe(3);
    const [best] = res.body.memories;
    expect(best.score).toBeGreaterThan(0);
    expect(best.snippet).toBe('To **deploy** **Apollo**: run the tests, tag, then push to main.');
    for (let i = 1; i < res.body.memories.length; i++) {
      expect(res.body.memories[i].score).toBeLessThanOrEqual(res.body.memories[i - 1].score);
    }
    const exact = await search(key, { query: 'USER.TIMEZONE' });
    expect(keys(exact)[0]).toBe('user.timezone');
    expect(exact.body.memories[0].snippet).toBeNull(); // the key matched; no word of the value did
    const identifier = await search(key, { query: 'INC-4521' });
    expect(keys(identifier)[0]).toBe('incident/INC-4521');
    const metadataOnly = await search(key, { query: 'food' });
    expect(keys(metadataOnly)).toEqual(['lunch']);
    expect((await search(key, { query: 'kubernetes' })).body).toMatchObject({ memories: [], total: 0 });
  });

  it('filter narrows by types, metadata, update time and key prefix, with or without a query', async () => {
    const key = await agentWithNotes();
    const start = clock.now().getTime() - 6_000; // the first note was stored then
    const at = (ms: number) => new Date(ms).toISOString();
    const cases: [Record<string, unknown>, string[]][] = [
      [
        { filter: { memory_types: ['workflow', 'fact'] } },
        ['deploy/gemini', 'deploy/apollo', 'project.apollo'],
      ],
      [{ filter: { metadata: { project: 'apollo' } } }, ['deploy/apollo', 'project.apollo']],
      [{ filter: { metadata: { severity: 2 } } }, ['incident/INC-4521']],
      [{ filter: { metadata: { severity: '2' } } }, []],
      [{ filter: { key_prefix: 'deploy/' } }, ['deploy/gemini', 'deploy/apollo']],
      [
        { filter: { updated_after: at(start + 500), updated_before: at(start + 2_500) } },
        ['deploy/gemini', 'deploy/apollo'],
      ],
      [{ filter: { updated_after: '2026-01-01T01:00:00+01:00' } }, keys(await search(key))],
      [{ query: 'apollo', filter: { memory_types: ['workflow'] } }, ['deploy/apollo']],
      [{ memory_type: 'workflow', filter: { memory_types: ['fact'] } }, []],
      [{ memory_type: 'workflow', filter: { key_prefix: 'deploy/a' } }, ['deploy/apollo']],
    ];
    for (const [fields, expected] of cases) {
      const res = await search(key, fields);
      expect(res.status, res.text).toBe(200);
      expect(keys(res), JSON.stringify(fields)).toEqual(expected);
      expect(res.body.total, JSON.stringify(fields)).toBe(expected.length);
    }
  });

  it('cursor pages through every match once, each page a paid call, the total on every page', async () => {
    const key = await server.register();
    for (let i = 0; i < 8; i++)
      await store(key, { memory_key: `note-${i}`, memory_value: `alpha note ${i}` });
    for (const query of [undefined, 'alpha']) {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      const before = await balance(key);
      do {
        const res = await search(key, {
          limit: 3,
          ...(query ? { query } : {}),
          ...(cursor ? { cursor } : {}),
        });
        expect(res.status, res.text).toBe(200);
        expect(res.body.total).toBe(8);
        seen.push(...keys(res));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor !== null);
      expect(pages).toBe(3);
      expect([...seen].sort()).toEqual(Array.from({ length: 8 }, (_, i) => `note-${i}`));
      expect(await balance(key)).toBe(before - 3);
    }
    // A memory updated between pages moves to the front: the next page still gives each of the rest once.
    const first = await search(key, { limit: 4 });
    await store(key, { memory_key: 'note-0', memory_value: 'updated' });
    const rest = await search(key, { limit: 10, cursor: first.body.next_cursor });
    expect(keys(rest)).toEqual(['note-3', 'note-2', 'note-1']);
  });

  it('a cursor from another search, a forged one or a bad filter is a free 400 naming the field', async () => {
    const key = await agentWithNotes();
    const page = await search(key, { limit: 2 });
    const before = await balance(key);
    const cases: [Record<string, unknown>, string][] = [
      [{ cursor: page.body.next_cursor, memory_type: 'fact' }, 'cursor'],
      [{ cursor: page.body.next_cursor, query: 'apollo' }, 'cursor'],
      [{ cursor: 'bm90IGEgY3Vyc29y' }, 'cursor'],
      [{ cursor: Buffer.from(JSON.stringify({ f: 'x', o: 1 })).toString('base64url') }, 'cursor'],
      [{ query: '   ' }, 'query'],
      [{ query: 'a\u0007b' }, 'query'],
      [{ query: 'x'.repeat(501) }, 'query'],
      [{ filter: { metadata: { project: { nested: true } } } }, 'filter.metadata.project'],
      [{ filter: { memory_types: [] } }, 'filter.memory_types'],
      [{ filter: { updated_after: 'yesterday' } }, 'filter.updated_after'],
      [{ filter: { unknown: 1 } }, 'filter'],
      [{ filter: { key_prefix: '' } }, 'filter.key_prefix'],
    ];
    for (const [fields, field] of cases) {
      const res = await search(key, fields);
      expect(res.status, `${JSON.stringify(fields)}: ${res.text}`).toBe(400);
      expect(res.body.code).toBe('invalid_input');
      expect(res.body.field, res.text).toBe(field);
    }
    expect(await balance(key)).toBe(before);
  });

  it('never finds an expired memory or another agent’s', async () => {
    const mine = await server.register();
    const theirs = await server.register();
    await store(theirs, { memory_key: 'secret', memory_value: 'zebra crossing' });
    await store(mine, { memory_key: 'short', memory_value: 'zebra for a minute', ttl_seconds: 60 });
    await store(mine, { memory_key: 'kept', memory_value: 'a zebra to keep' });
    expect(keys(await search(mine, { query: 'zebra' })).sort()).toEqual(['kept', 'short']);
    clock.advance(60_000);
    const res = await search(mine, { query: 'zebra' });
    expect(keys(res)).toEqual(['kept']);
    expect(res.body.total).toBe(1);
    expect(keys(await search(mine, { query: 'secret' }))).toEqual([]);
    expect(keys(await search(mine))).toEqual(['kept']);
  });
});
