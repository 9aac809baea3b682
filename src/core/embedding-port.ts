/** The port of semantic search: text in, one vector per text out (an OpenAI-compatible embeddings API). */
export interface Embedder {
  /** One vector per text, in order. Throws when the endpoint fails or answers another shape. */
  embed(texts: string[]): Promise<number[][]>;
}
