/**
 * Semantic search's vectors: each agent's memories embedded (key and value), kept by key with the version they
 * were made from. Vectors are unit length, so a similarity is a dot product.
 *
 * - With the in-process model alone (`embedNow`, the default, on the JSON store), a write embeds nothing: a
 *   search embeds on the spot each memory it ranks that has no vector of its current version, and keeps the
 *   vector for the next search. A write only forgets its key's vector. Nothing else reads the vectors (the
 *   in-process model does not find alone, see `findsAlone`), so a memory no search touches is never embedded,
 *   and no answer depends on when a vector was made (issue 38: the write path's cost).
 * - With a model from AC_EMBEDDINGS_URL, or with a vector store, memories are embedded after they are
 *   written, in the background and in batches, never delaying a write's answer (`embedsOnWrite`).
 * - With a vector store (PostgreSQL: a column of the memory, `VectorStore`), the vectors made here are saved
 *   with their memory, and before each ranked search the agent's vectors saved since the last look (by any
 *   instance) are read in: every instance finds a memory by meaning as soon as its vector is saved.
 * - A memory this process has no vector for (written before a restart, or by an instance with another model)
 *   is embedded when its agent's first ranked search here catches up (when writes embed).
 */
import type { Embedder } from './embedding-port.js';
import type { Memory } from './model.js';

const BATCH = 32;
/** Query vectors kept (in-process model): short texts, 400 bytes of vector each. */
const QUERY_VECTORS_KEPT = 1000;

/** A memory version's vector, as a vector store keeps it. */
export interface StoredVector {
  key: string;
  version: number;
  vector: Float32Array;
}

/** Where vectors are kept with their memories (PostgreSQL), so that every instance shares them. */
export interface VectorStore {
  /** Saves vectors of these memory versions (a memory whose version moved on since keeps none). */
  save(agentId: string, model: string, vectors: readonly StoredVector[]): Promise<void>;
  /** The agent's vectors of `model` saved after `watermark` ('' for all), and the watermark to ask from next. */
  since(
    agentId: string,
    model: string,
    watermark: string,
  ): Promise<{ vectors: StoredVector[]; watermark: string }>;
}

export function unit(values: ArrayLike<number>): Float32Array {
  const length = values.length;
  let norm = 0;
  for (let i = 0; i < length; i++) {
    const x = values[i] as number;
    norm += x * x;
  }
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  // A plain loop: Float32Array.from with a mapping function costs several times as much.
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = (values[i] as number) * scale;
  return out;
}

export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

export const embeddingText = (memory: Pick<Memory, 'key' | 'value'>) => `${memory.key}\n${memory.value}`;

/**
 * One agent's vectors, side by side in one array (a search reads them all: one pass over contiguous
 * memory), a slot per key; a removed key's slot takes the last one's.
 */
class AgentVectors {
  private readonly slotOf = new Map<string, number>();
  private keys: string[] = [];
  private versions = new Int32Array(16);
  private matrix = new Float32Array(0);
  private dimensions = 0;

  get(key: string): { version: number; vector: Float32Array } | undefined {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return undefined;
    const at = slot * this.dimensions;
    return { version: this.versions[slot] as number, vector: this.matrix.subarray(at, at + this.dimensions) };
  }

  /**
   * The dot product of `query` with the key's vector of `version` (0 when their lengths differ, as `dot`);
   * undefined when the key has no vector of that version. Reads the vector in place.
   */
  similarity(key: string, version: number, query: Float32Array): number | undefined {
    const slot = this.slotOf.get(key);
    if (slot === undefined || this.versions[slot] !== version) return undefined;
    const { matrix, dimensions } = this;
    if (query.length !== dimensions) return 0;
    let sum = 0;
    for (let d = 0, at = slot * dimensions; d < dimensions; d++, at++) {
      sum += (query[d] as number) * (matrix[at] as number);
    }
    return sum;
  }

  set(key: string, version: number, vector: Float32Array): void {
    if (this.dimensions !== vector.length) {
      // Another model's vectors (or the first): start again.
      this.slotOf.clear();
      this.keys = [];
      this.dimensions = vector.length;
      this.matrix = new Float32Array(16 * this.dimensions);
    }
    let slot = this.slotOf.get(key);
    if (slot === undefined) {
      slot = this.keys.length;
      this.keys.push(key);
      this.slotOf.set(key, slot);
      if ((slot + 1) * this.dimensions > this.matrix.length) {
        const grown = new Float32Array(this.matrix.length * 2);
        grown.set(this.matrix);
        this.matrix = grown;
      }
      if (slot >= this.versions.length) {
        const grown = new Int32Array(this.versions.length * 2);
        grown.set(this.versions);
        this.versions = grown;
      }
    }
    this.versions[slot] = version;
    this.matrix.set(vector, slot * this.dimensions);
  }

  delete(key: string): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return;
    const last = this.keys.length - 1;
    const lastKey = this.keys[last] as string;
    if (slot !== last) {
      this.keys[slot] = lastKey;
      this.slotOf.set(lastKey, slot);
      this.versions[slot] = this.versions[last] as number;
      this.matrix.copyWithin(slot * this.dimensions, last * this.dimensions, (last + 1) * this.dimensions);
    }
    this.keys.pop();
    this.slotOf.delete(key);
  }

  /** The keys whose vectors' dot product with `query` is at least `min`, with it. */
  atLeast(query: Float32Array, min: number): { key: string; similarity: number }[] {
    const out: { key: string; similarity: number }[] = [];
    const { matrix, dimensions } = this;
    if (query.length !== dimensions) return out;
    for (let slot = 0, at = 0; slot < this.keys.length; slot++, at += dimensions) {
      let sum = 0;
      for (let d = 0; d < dimensions; d++) sum += (query[d] as number) * (matrix[at + d] as number);
      if (sum >= min) out.push({ key: this.keys[slot] as string, similarity: sum });
    }
    return out;
  }
}

export class SemanticIndex {
  /**
   * Whether written memories are embedded after each write, in the background: with a model from
   * AC_EMBEDDINGS_URL (a search finds by meaning alone only the memories that have a vector) and with a vector
   * store (other instances read the vectors saved). Not with the in-process model alone: its vectors are made
   * by the searches that rank their memories (see the module's header).
   */
  readonly embedsOnWrite: boolean;
  private readonly vectors = new Map<string, AgentVectors>();
  private readonly queue = new Map<string, { agentId: string; memory: Memory }>();
  private running: Promise<void> | undefined;
  private readonly caughtUp = new Set<string>();
  /** Per agent: the vector store's watermark of what this process has read. */
  private readonly watermarks = new Map<string, string>();
  /** The in-process model's vectors of recent queries, by text (bounded: cleared when full). */
  private readonly queryVectors = new Map<string, Float32Array>();

  constructor(
    private readonly embedder: Embedder,
    private readonly onError: (err: unknown) => void,
    private readonly store?: VectorStore,
    /** Told of each batch embedded (its size, its time, how many still wait): the debug log. */
    private readonly onBatch?: (batch: { embedded: number; ms: number; queued: number }) => void,
  ) {
    this.embedsOnWrite = embedder.embedNow === undefined || store !== undefined;
  }

  get model(): string {
    return this.embedder.model;
  }

  /**
   * Whether a search also reads every vector of the agent for the memories nearest the query (found by
   * meaning alone): with a model from AC_EMBEDDINGS_URL. The in-process model's vectors, means of word
   * vectors, are alike for any two English texts (0.72 for a median pair of LoCoMo turns): its similarity
   * orders what a search found otherwise, and searching by it alone found nothing more on LoCoMo while
   * costing a pass over every vector.
   */
  get findsAlone(): boolean {
    return this.embedder.embedNow === undefined;
  }

  /** Reports a failure of the background work (to the service's log). */
  reportError(err: unknown): void {
    this.onError(err);
  }

  /**
   * Memories just written: embedded in the background (a newer write of a key replaces an older in the
   * queue), or, when writes do not embed, their keys' vectors forgotten (a key written anew after it expired
   * may take a version its old vector has: `similarity` would take that vector for the new text).
   */
  written(agentId: string, memories: readonly Memory[]): void {
    if (!this.embedsOnWrite) {
      const have = this.vectors.get(agentId);
      if (have) for (const memory of memories) have.delete(memory.key);
      return;
    }
    for (const memory of memories) this.queue.set(`${agentId}\u0000${memory.key}`, { agentId, memory });
    this.kick();
  }

  /** Starts the background drain unless it runs or nothing waits; it restarts itself for what came meanwhile. */
  private kick(): void {
    if (this.running || this.queue.size === 0) return;
    // After the current turn of the event loop: the write's answer goes first.
    this.running = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.drain())
      .finally(() => {
        this.running = undefined;
        this.kick();
      });
  }

  deleted(agentId: string, key: string): void {
    this.queue.delete(`${agentId}\u0000${key}`);
    this.vectors.get(agentId)?.delete(key);
  }

  /**
   * Whether the agent's memories still need a first look in this process (see `catchUp`): never when writes
   * do not embed (a search embeds what it ranks).
   */
  needsCatchUp(agentId: string): boolean {
    return this.embedsOnWrite && !this.caughtUp.has(agentId);
  }

  /** Queues the agent's memories that have no vector here, or one of an older version (when writes embed). */
  catchUp(agentId: string, memories: readonly Memory[]): void {
    this.caughtUp.add(agentId);
    if (!this.embedsOnWrite) return;
    const have = this.vectors.get(agentId);
    this.written(
      agentId,
      memories.filter((memory) => have?.get(memory.key)?.version !== memory.version),
    );
  }

  /** Reads in the agent's vectors saved (by any instance) since this process last looked. */
  async sync(agentId: string): Promise<void> {
    if (!this.store) return;
    const { vectors, watermark } = await this.store.since(
      agentId,
      this.embedder.model,
      this.watermarks.get(agentId) ?? '',
    );
    for (const { key, version, vector } of vectors) this.keep(agentId, key, version, vector);
    this.watermarks.set(agentId, watermark);
  }

  /** Resolves once nothing is waiting to be embedded (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** The query's vector, or undefined when the model fails (the search is then lexical only). */
  async embedQuery(text: string): Promise<Float32Array | undefined> {
    try {
      if (this.embedder.embedNow) {
        // The in-process model's vectors of recent queries are kept (a query's vector is only read).
        let vector = this.queryVectors.get(text);
        if (vector === undefined) {
          vector = this.embedder.embedNow(text);
          if (this.queryVectors.size >= QUERY_VECTORS_KEPT) this.queryVectors.clear();
          this.queryVectors.set(text, vector);
        }
        return vector;
      }
      const [vector] = await this.embedder.embed([text]);
      return vector ? unit(vector) : undefined;
    } catch (err) {
      this.onError(err);
      return undefined;
    }
  }

  /**
   * The similarity of `memory` to the query's vector: from its vector of this version, made now by an
   * in-process model if there is none; undefined when none is to be had yet.
   */
  similarity(agentId: string, memory: Memory, query: Float32Array): number | undefined {
    const kept = this.vectors.get(agentId)?.similarity(memory.key, memory.version, query);
    if (kept !== undefined) return kept;
    if (!this.embedder.embedNow) return undefined;
    const vector = this.embedder.embedNow(embeddingText(memory));
    this.keep(agentId, memory.key, memory.version, vector);
    return dot(query, vector);
  }

  /** The agent's keys most similar to `query`, at least `min`, at most `max`, most similar first. */
  nearest(
    agentId: string,
    query: Float32Array,
    min: number,
    max: number,
  ): { key: string; similarity: number }[] {
    const out = this.vectors.get(agentId)?.atLeast(query, min) ?? [];
    return out.sort((a, b) => b.similarity - a.similarity || (a.key < b.key ? -1 : 1)).slice(0, max);
  }

  /** Unit vectors of `texts`: the in-process model's as `similarity` makes them, else the model's, scaled. */
  private async embedBatch(texts: string[]): Promise<Float32Array[]> {
    if (this.embedder.embedNow) {
      const out: Float32Array[] = [];
      for (const text of texts) out.push(this.embedder.embedNow(text));
      return out;
    }
    return (await this.embedder.embed(texts)).map(unit);
  }

  private keep(agentId: string, key: string, version: number, vector: Float32Array): void {
    let perAgent = this.vectors.get(agentId);
    if (!perAgent) {
      perAgent = new AgentVectors();
      this.vectors.set(agentId, perAgent);
    }
    const current = perAgent.get(key);
    if (!current || current.version <= version) perAgent.set(key, version, vector);
  }

  private async drain(): Promise<void> {
    while (this.queue.size > 0) {
      // The first BATCH waiting (a Map keeps its order), without copying the whole queue.
      const batch: [string, { agentId: string; memory: Memory }][] = [];
      for (const entry of this.queue) {
        batch.push(entry);
        if (batch.length === BATCH) break;
      }
      for (const [slot] of batch) this.queue.delete(slot);
      const started = performance.now();
      let vectors: Float32Array[];
      try {
        vectors = await this.embedBatch(batch.map(([, { memory }]) => embeddingText(memory)));
      } catch (err) {
        this.onError(err);
        continue; // these stay without a vector until a later catch-up or write
      }
      const saved = new Map<string, StoredVector[]>();
      batch.forEach(([, { agentId, memory }], i) => {
        const vector = vectors[i] as Float32Array;
        this.keep(agentId, memory.key, memory.version, vector);
        const list = saved.get(agentId) ?? [];
        list.push({ key: memory.key, version: memory.version, vector });
        saved.set(agentId, list);
      });
      if (this.store) {
        for (const [agentId, list] of saved) {
          await this.store
            .save(agentId, this.embedder.model, list)
            .catch((err: unknown) => this.onError(err));
        }
      }
      this.onBatch?.({ embedded: batch.length, ms: performance.now() - started, queued: this.queue.size });
    }
  }
}
