/**
 * How a ranked search refines the store's lexical ranking (issue 31), over REST on both stores
 * (AC_TEST_STORE=postgres runs it on PostgreSQL): the memory next to a match in a numbered series comes
 * along (an answer after its question), semantic search with the in-process model is on with no
 * configuration, AC_EMBEDDINGS=off leaves the lexical ranking and its neighbours, and the key tiers still
 * come first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_MODEL } from '../../src/embeddings/local-embedder.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let lexicalOnly: TestServer;
beforeAll(async () => {
  [server, lexicalOnly] = await Promise.all([
    startTestServer(),
    startTestServer({ env: { AC_EMBEDDINGS: 'off' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.close(), lexicalOnly?.close()]);
});

const CHAT: [string, string][] = [
  ['chat/D7:16', 'Caroline: Your cats look adorable! What are their names?'],
  ['chat/D7:17', 'Melanie: Luna and Oliver! They are so sweet and playful.'],
  ['chat/D7:18', 'Caroline: I just started a pottery class, it is like therapy.'],
  ['chat/D7:19', 'Melanie: I love it, the kids and I made bowls out of clay last weekend.'],
  ['notes/groceries', 'Buy oat milk, bread and coffee beans.'],
  ['notes/names', 'Nothing here but this key holds the word names.'],
];

async function agentWithChat(on: TestServer): Promise<string> {
  const key = await on.register();
  const res = await on.request('POST', '/api/ac/memory/batch', {
    key,
    body: {
      agent_key: key,
      memories: CHAT.map(([memory_key, memory_value]) => ({ memory_key, memory_value })),
    },
  });
  expect(res.status).toBe(200);
  return key;
}

const search = (on: TestServer, key: string, query: string, extra: Record<string, unknown> = {}) =>
  on.request('POST', '/api/ac/memory/search', { key, body: { agent_key: key, query, ...extra } });
const keys = (res: { body: { memories: { memory_key: string }[] } }) =>
  res.body.memories.map((m) => m.memory_key);

describe('ranked search: neighbours, the in-process model, key tiers', () => {
  it('semantic search is on with no configuration, with the in-process model', () => {
    expect(server.running.service.core.semantic?.model).toBe(LOCAL_MODEL);
    expect(lexicalOnly.running.service.core.semantic).toBeUndefined();
  });

  for (const [label, on] of [
    ['default', () => server],
    ['AC_EMBEDDINGS=off', () => lexicalOnly],
  ] as const) {
    it(`${label}: the answer next to the question that shares the query's words is found, and counted`, async () => {
      const key = await agentWithChat(on());
      const res = await search(on(), key, 'What are the names of the cats?');
      expect(res.status).toBe(200);
      const found = keys(res);
      // D7:16 holds "cats" and "names"; D7:17, next to it, holds the answer and none of the query's words.
      expect(found.slice(0, 3)).toContain('chat/D7:17');
      expect(res.body.total).toBe(found.length);
      const answer = res.body.memories.find((m: { memory_key: string }) => m.memory_key === 'chat/D7:17');
      expect(answer.snippet).toBeNull();
    });

    it(`${label}: the key tiers still come first, and filters hold for neighbours too`, async () => {
      const key = await agentWithChat(on());
      const tiered = await search(on(), key, 'names');
      expect(keys(tiered)[0]).toBe('notes/names');
      const filtered = await search(on(), key, 'cats names', { filter: { key_prefix: 'chat/D7:16' } });
      expect(keys(filtered)).toEqual(['chat/D7:16']);
      expect(filtered.body.total).toBe(1);
    });
  }

  it('pages of a ranked search hold every hit once, and total is the same on each', async () => {
    const key = await agentWithChat(server);
    const all = await search(server, key, 'Melanie kids clay cats', { limit: 100 });
    const first = await search(server, key, 'Melanie kids clay cats', { limit: 2 });
    const second = await search(server, key, 'Melanie kids clay cats', {
      limit: 2,
      cursor: first.body.next_cursor,
    });
    expect([...keys(first), ...keys(second)]).toEqual(keys(all).slice(0, 4));
    expect(first.body.total).toBe(all.body.total);
    expect(second.body.total).toBe(all.body.total);
  });
});
