/**
 * Semantic search's vectors on PostgreSQL (migration 0008): saved into their memory's row after the write
 * commits, and read back by every instance, those saved since it last looked, before a ranked search.
 */
import type { StoredVector, VectorStore } from '../../core/semantic-index.js';
import type { Queryable } from './prepared.js';

/** The most vectors one read brings; a larger backlog is read in several. */
const PAGE = 5000;

function toBytes(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] as number, i * 4);
  return bytes;
}

function toVector(bytes: Buffer): Float32Array {
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}

export class PostgresVectorStore implements VectorStore {
  constructor(private readonly db: Queryable) {}

  async save(agentId: string, model: string, vectors: readonly StoredVector[]): Promise<void> {
    if (vectors.length === 0) return;
    await this.db.query(
      'UPDATE memories AS m SET embedding = u.embedding, embedding_model = $2, ' +
        "embedding_version = u.version, embedding_seq = nextval('memories_embedding_seq') " +
        'FROM unnest($3::text[], $4::integer[], $5::bytea[]) AS u(key, version, embedding) ' +
        'WHERE m.agent_id = $1 AND m.key = u.key AND m.version = u.version',
      [
        agentId,
        model,
        vectors.map((v) => v.key),
        vectors.map((v) => v.version),
        vectors.map((v) => toBytes(v.vector)),
      ],
    );
  }

  async since(
    agentId: string,
    model: string,
    watermark: string,
  ): Promise<{ vectors: StoredVector[]; watermark: string }> {
    const vectors: StoredVector[] = [];
    let after = /^\d+$/.test(watermark) ? watermark : '0';
    for (;;) {
      const { rows } = await this.db.query(
        'SELECT key, embedding_version, embedding, embedding_seq FROM memories ' +
          'WHERE agent_id = $1 AND embedding_seq > $2::bigint AND embedding_model = $3 ' +
          `ORDER BY embedding_seq LIMIT ${PAGE}`,
        [agentId, after, model],
      );
      for (const row of rows) {
        vectors.push({
          key: String(row.key),
          version: Number(row.embedding_version),
          vector: toVector(row.embedding as Buffer),
        });
      }
      if (rows.length > 0) after = String(rows.at(-1)?.embedding_seq);
      if (rows.length < PAGE) return { vectors, watermark: after };
    }
  }
}
