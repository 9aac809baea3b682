/**
 * The in-process embedding model (issue 31): read from the package's own file (nothing fetched), 100
 * dimensions, unit vectors, related texts nearer than unrelated ones, stop words and unknown words ignored.
 */
import { describe, expect, it } from 'vitest';
import { dot } from '../../src/core/semantic-index.js';
import { createLocalEmbedder, LOCAL_MODEL } from '../../src/embeddings/local-embedder.js';
import { readWordVectors } from '../../src/embeddings/word-vectors.js';

const embedder = createLocalEmbedder();
const embed = (text: string) => (embedder.embedNow as (text: string) => Float32Array)(text);

describe('the in-process embedding model', () => {
  it('holds 50,000 words of 100 dimensions', () => {
    const table = readWordVectors();
    expect(table.size).toBe(50_000);
    expect(table.dimensions).toBe(100);
    expect(embedder.model).toBe(LOCAL_MODEL);
  });

  it('gives unit vectors, the same for the same words, and zeros for a text without a known word', async () => {
    const v = embed('The kids made bowls out of clay.');
    expect(v).toHaveLength(100);
    expect(dot(v, v)).toBeCloseTo(1, 5);
    expect(embed('the KIDS made bowls, out of clay')).toEqual(v);
    expect([...embed('the of and zzqxv')].every((x) => x === 0)).toBe(true);
    const [batched] = await embedder.embed(['The kids made bowls out of clay.']);
    expect(Float32Array.from(batched as number[])).toEqual(v);
  });

  it('puts related texts nearer than unrelated ones', () => {
    const pottery = embed('I signed up for a pottery class');
    expect(dot(pottery, embed('we made bowls out of clay'))).toBeGreaterThan(
      dot(pottery, embed('the invoice is due on Friday')),
    );
    const career = embed('What fields would she pursue in her education?');
    expect(dot(career, embed("I'm keen on counseling or working in mental health"))).toBeGreaterThan(
      dot(career, embed('We roasted marshmallows around the campfire')),
    );
  });
});
