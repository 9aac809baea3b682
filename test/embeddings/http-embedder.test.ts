/**
 * The embeddings client against a fake OpenAI-compatible endpoint on loopback: where it posts, what it sends
 * (model, input, the key as a bearer token), the vectors in input order whatever order the answer lists
 * them in, and a failure for every answer of another shape.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpEmbedder, endpointOf } from '../../src/embeddings/http-embedder.js';
import { type FakeUpstream, startFakeUpstream } from '../fakes/fake-upstream.js';

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

describe('the embeddings client', () => {
  it('posts to {url}/v1/embeddings, or to a URL that already names /embeddings', () => {
    expect(endpointOf('http://127.0.0.1:11434')).toBe('http://127.0.0.1:11434/v1/embeddings');
    expect(endpointOf('http://127.0.0.1:11434/')).toBe('http://127.0.0.1:11434/v1/embeddings');
    expect(endpointOf('https://api.example.com/v1/embeddings')).toBe('https://api.example.com/v1/embeddings');
  });

  it('sends the model and the key, and returns the vectors in input order', async () => {
    upstream.route('/v1/embeddings', {
      json: {
        data: [
          { index: 1, embedding: [0, 1] },
          { index: 0, embedding: [1, 0] },
        ],
      },
    });
    const embedder = createHttpEmbedder({ url: upstream.url, model: 'm', apiKey: 'secret' });
    expect(await embedder.embed(['a', 'b'])).toEqual([
      [1, 0],
      [0, 1],
    ]);
    const [request] = upstream.requests.slice(-1);
    expect(request?.method).toBe('POST');
    expect(request?.headers.authorization).toBe('Bearer secret');
    expect(await embedder.embed([])).toEqual([]);
  });

  it.each([
    ['an error status', { status: 500, json: { error: 'down' } }, /answered 500/],
    [
      'too few embeddings',
      { json: { data: [{ index: 0, embedding: [1] }] } },
      /answered 1 embeddings for 2 texts/,
    ],
    ['no data', { json: {} }, /answered 0 embeddings/],
    [
      'an embedding of strings',
      { json: { data: [{ embedding: ['x'] }, { embedding: [1] }] } },
      /not a list of numbers/,
    ],
  ])('fails on %s', async (_name, reply, message) => {
    upstream.route('/v1/embeddings', reply);
    const embedder = createHttpEmbedder({ url: upstream.url, model: 'm', apiKey: undefined });
    await expect(embedder.embed(['a', 'b'])).rejects.toThrow(message);
  });
});
