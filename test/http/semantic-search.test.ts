/**
 * Semantic search (issue 15): with AC_EMBEDDINGS_URL set, memories are embedded after they are written (in
 * the background, never delaying the write's answer), and a ranked memory_search fuses the lexical ranking
 * with the memories most similar to the query (reciprocal rank fusion): a memory found by meaning alone comes
 * back and counts in the total. Against a fake embeddings server on loopback, on both stores
 * (AC_TEST_STORE=postgres). Without the endpoint, or while it fails, search is lexical and still answers.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeEmbeddings, startFakeEmbeddings } from '../fakes/fake-embeddings.js';
import { testDatabase } from '../helpers/postgres.js';
import { ON_POSTGRES, startTestServer, type TestServer } from '../helpers/test-server.js';

let fake: FakeEmbeddings;
let server: TestServer;
beforeAll(async () => {
  fake = await startFakeEmbeddings();
  server = await startTestServer({ env: { AC_EMBEDDINGS_URL: fake.url, AC_EMBEDDINGS_MODEL: 'fake' } });
});
afterAll(async () => {
  await server?.close();
  await fake?.close();
});

const embedded = (s: TestServer = server) => s.running.service.core.semantic?.idle();
const store = async (key: string, memory_key: string, memory_value: string, extra = {}, s = server) => {
  const res = await s.request('POST', '/api/ac/memory', {
    key,
    body: { agent_key: key, memory_key, memory_value, ...extra },
  });
  expect(res.status, res.text).toBe(200);
};
const search = (key: string, fields: Record<string, unknown>, s = server) =>
  s.request('POST', '/api/ac/memory/search', { key, body: { agent_key: key, ...fields } });
const keys = (res: { body: { memories: { memory_key: string }[] } }) =>
  res.body.memories.map((m) => m.memory_key);

describe('semantic search (REST)', () => {
  it('finds a memory by meaning alone, fused with the lexical matches, and counts it in the total', async () => {
    const key = await server.register();
    await store(key, 'commute', 'I drive an automobile to work every day');
    await store(key, 'pets', 'The puppy needs a walk at noon');
    await store(key, 'walker', 'Dog walker comes on Tuesdays');
    await store(key, 'groceries', 'Buy bread and milk');
    await embedded();
    const car = await search(key, { query: 'car' });
    expect(car.status, car.text).toBe(200);
    expect(keys(car)).toEqual(['commute']); // no memory holds the word "car"
    expect(car.body.total).toBe(1);
    expect(car.body.memories[0].snippet).toBeNull();
    const dog = await search(key, { query: 'dog' });
    // "walker" holds the word and the concept; "pets" the concept only.
    expect(keys(dog)).toEqual(['walker', 'pets']);
    expect(dog.body.total).toBe(2);
    expect(dog.body.memories[0].score).toBeGreaterThan(dog.body.memories[1].score);
    const paged = await search(key, { query: 'dog', limit: 1 });
    expect(keys(paged)).toEqual(['walker']);
    const next = await search(key, { query: 'dog', limit: 1, cursor: paged.body.next_cursor });
    expect(keys(next)).toEqual(['pets']);
    expect(next.body.next_cursor).toBeNull();
    expect(fake.inputs).toContain('commute\nI drive an automobile to work every day');
  });

  it('applies the conditions to memories found by meaning, and forgets deleted and expired ones', async () => {
    const key = await server.register();
    await store(key, 'a', 'A sedan for sale', { memory_type: 'fact' });
    await store(key, 'b', 'Vehicle inspection due', { memory_type: 'workflow' });
    await store(key, 'c', 'Automobile club renewal');
    await embedded();
    expect(keys(await search(key, { query: 'car', filter: { memory_types: ['fact'] } }))).toEqual(['a']);
    const del = await server.request('DELETE', '/api/ac/memory', {
      key,
      body: { agent_key: key, memory_key: 'a' },
    });
    expect(del.status).toBe(200);
    expect(
      (await search(key, { query: 'car' })).body.memories
        .map((m: { memory_key: string }) => m.memory_key)
        .sort(),
    ).toEqual(['b', 'c']);
  });

  it('never delays a write for its embedding: the store answers while the endpoint holds its answer', async () => {
    const key = await server.register();
    fake.hold = true;
    const before = fake.requests;
    try {
      await store(key, 'held', 'The clinic appointment is on Friday');
      // The embedding was asked for, and has no answer yet; the write has answered.
      await expect.poll(() => fake.requests, { timeout: 5_000 }).toBeGreaterThan(before);
    } finally {
      fake.hold = false;
      fake.release();
    }
    await embedded();
    expect(keys(await search(key, { query: 'doctor' }))).toEqual(['held']);
  });

  it('answers lexically, and charges as usual, while the endpoint fails', async () => {
    const key = await server.register();
    await store(key, 'money', 'Salary arrives on the 25th');
    await embedded();
    fake.failWith = 503;
    try {
      const res = await search(key, { query: 'salary' });
      expect(res.status, res.text).toBe(200);
      expect(keys(res)).toEqual(['money']);
      expect(res.body.cost_cents).toBe(1);
      expect(keys(await search(key, { query: 'cash' }))).toEqual([]);
    } finally {
      fake.failWith = undefined;
    }
    expect(keys(await search(key, { query: 'cash' }))).toEqual(['money']);
  });

  it('after a restart, an agent catches up at its first ranked search: embedded again (JSON), or read from the database (PostgreSQL)', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'ac-semantic-'));
    const env = { AC_EMBEDDINGS_URL: fake.url, AC_EMBEDDINGS_MODEL: 'fake' };
    const first = await startTestServer({ dataDir, env });
    const key = await first.register();
    await store(key, 'joy', 'A cheerful morning', {}, first);
    await embedded(first);
    await first.stop();
    const again = await startTestServer({ dataDir, env });
    try {
      // This process has no vectors yet: the first ranked search starts the catch-up (and may be lexical
      // only, if it is answered before the catch-up is done), which embeds the memory again.
      const embeddedBefore = fake.inputs.filter((text) => text === 'joy\nA cheerful morning').length;
      expect(embeddedBefore).toBe(1);
      await search(key, { query: 'happy' }, again);
      await expect
        .poll(async () => {
          await embedded(again);
          return keys(await search(key, { query: 'happy' }, again));
        })
        .toEqual(['joy']);
      // PostgreSQL keeps the vector with its memory (migration 0008): the new process reads it, never asks again.
      expect(fake.inputs.filter((text) => text === 'joy\nA cheerful morning')).toHaveLength(
        ON_POSTGRES ? 1 : 2,
      );
    } finally {
      await again.close();
    }
  });
  it('on PostgreSQL (whatever the run’s store), another instance finds a memory by meaning with the vector saved with it, embedding nothing', async () => {
    const { url } = await testDatabase({ label: 'semantic' });
    const env = { AC_EMBEDDINGS_URL: fake.url, AC_EMBEDDINGS_MODEL: 'fake', DATABASE_URL: url, DATA_DIR: '' };
    const writer = await startTestServer({ env });
    const reader = await startTestServer({ env });
    try {
      const key = await writer.register();
      await store(key, 'glee', 'A joyful afternoon', {}, writer);
      await embedded(writer);
      expect(keys(await search(key, { query: 'happy' }, reader))).toEqual(['glee']);
      await embedded(reader);
      expect(fake.inputs.filter((text) => text === 'glee\nA joyful afternoon')).toHaveLength(1);
    } finally {
      await Promise.all([writer.close(), reader.close()]);
    }
  });
});
