/**
 * Semantic search's vectors (AC_EMBEDDINGS_URL), per process: each agent's memories embedded (key and value)
 * after they are written, in the background and in batches, never delaying a write's answer, and kept by
 * key with the version they were made from. A memory this process has no vector for (written before a
 * restart, or by another instance) is embedded when its agent's first ranked search here catches up.
 * Vectors are unit length, so a similarity is a dot product.
 */
import type { Embedder } from './embedding-port.js';
import type { Memory } from './model.js';

const BATCH = 32;

interface Vector {
  version: number;
  vector: Float32Array;
}

function unit(values: readonly number[]): Float32Array {
  let norm = 0;
  for (const x of values) norm += x * x;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return Float32Array.from(values, (x) => x * scale);
}

function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

export const embeddingText = (memory: Pick<Memory, 'key' | 'value'>) => `${memory.key}\n${memory.value}`;

export class SemanticIndex {
  private readonly vectors = new Map<string, Map<string, Vector>>();
  private readonly queue = new Map<string, { agentId: string; memory: Memory }>();
  private running: Promise<void> | undefined;
  private readonly caughtUp = new Set<string>();

  constructor(
    private readonly embedder: Embedder,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Reports a failure of the background work (to the service's log). */
  reportError(err: unknown): void {
    this.onError(err);
  }

  /** Memories just written: embedded in the background (a newer write of a key replaces an older in the queue). */
  written(agentId: string, memories: readonly Memory[]): void {
    for (const memory of memories) this.queue.set(`${agentId}\u0000${memory.key}`, { agentId, memory });
    this.kick();
  }

  /** Starts the background drain unless it runs or nothing waits; it restarts itself for what came meanwhile. */
  private kick(): void {
    if (this.running || this.queue.size === 0) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      this.kick();
    });
  }

  deleted(agentId: string, key: string): void {
    this.queue.delete(`${agentId}\u0000${key}`);
    this.vectors.get(agentId)?.delete(key);
  }

  /** Whether the agent's memories still need a first look in this process (see `catchUp`). */
  needsCatchUp(agentId: string): boolean {
    return !this.caughtUp.has(agentId);
  }

  /** Queues the agent's memories that have no vector here, or one of an older version. */
  catchUp(agentId: string, memories: readonly Memory[]): void {
    this.caughtUp.add(agentId);
    const have = this.vectors.get(agentId);
    this.written(
      agentId,
      memories.filter((memory) => have?.get(memory.key)?.version !== memory.version),
    );
  }

  /** Resolves once nothing is waiting to be embedded (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** The query's vector, or undefined when the endpoint fails (the search is then lexical only). */
  async embedQuery(text: string): Promise<Float32Array | undefined> {
    try {
      const [vector] = await this.embedder.embed([text]);
      return vector ? unit(vector) : undefined;
    } catch (err) {
      this.onError(err);
      return undefined;
    }
  }

  /** The agent's keys most similar to `query`, at least `min`, at most `max`, most similar first. */
  nearest(
    agentId: string,
    query: Float32Array,
    min: number,
    max: number,
  ): { key: string; similarity: number }[] {
    const out: { key: string; similarity: number }[] = [];
    for (const [key, { vector }] of this.vectors.get(agentId) ?? []) {
      const similarity = dot(query, vector);
      if (similarity >= min) out.push({ key, similarity });
    }
    return out.sort((a, b) => b.similarity - a.similarity || (a.key < b.key ? -1 : 1)).slice(0, max);
  }

  private async drain(): Promise<void> {
    while (this.queue.size > 0) {
      const batch = [...this.queue.entries()].slice(0, BATCH);
      for (const [slot] of batch) this.queue.delete(slot);
      let vectors: number[][];
      try {
        vectors = await this.embedder.embed(batch.map(([, { memory }]) => embeddingText(memory)));
      } catch (err) {
        this.onError(err);
        continue; // these stay without a vector until a later catch-up or write
      }
      batch.forEach(([, { agentId, memory }], i) => {
        let perAgent = this.vectors.get(agentId);
        if (!perAgent) {
          perAgent = new Map();
          this.vectors.set(agentId, perAgent);
        }
        const current = perAgent.get(memory.key);
        if (!current || current.version <= memory.version) {
          perAgent.set(memory.key, { version: memory.version, vector: unit(vectors[i] as number[]) });
        }
      });
    }
  }
}
