/** The port of semantic search: text in, one vector per text out. */
export interface Embedder {
  /** The model's name: vectors of different models are never compared (stored vectors carry it). */
  readonly model: string;
  /** One vector per text, in order. Throws when the model (an endpoint) fails or answers another shape. */
  embed(texts: string[]): Promise<number[][]>;
  /**
   * An in-process model cheap enough to run inline (microseconds): the text's unit vector at once. A search
   * embeds what it finds without a vector this way, so its answer never depends on background work.
   */
  embedNow?(text: string): Float32Array;
}
