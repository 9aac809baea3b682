/**
 * An OpenAI-compatible embeddings endpoint (`POST /v1/embeddings` with `{model, input}`, answering
 * `{data: [{index, embedding}]}`), such as OpenAI's or a local Ollama's, over HTTP with a timeout.
 */
import type { EmbeddingsConfig } from '../config.js';
import type { Embedder } from '../core/embedding-port.js';

const TIMEOUT_MS = 10_000;

export function endpointOf(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return /\/embeddings$/.test(trimmed) ? trimmed : `${trimmed}/v1/embeddings`;
}

export function createHttpEmbedder(config: EmbeddingsConfig): Embedder {
  const endpoint = endpointOf(config.url);
  return {
    model: `${config.model} at ${endpoint}`,
    async embed(texts) {
      if (texts.length === 0) return [];
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: config.model, input: texts }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`the embeddings endpoint ${endpoint} answered ${res.status}`);
      const body = (await res.json()) as { data?: { index?: number; embedding?: unknown }[] };
      const data = Array.isArray(body.data) ? body.data : [];
      const vectors: number[][] = [];
      for (const [i, item] of data.entries()) {
        const at = typeof item.index === 'number' ? item.index : i;
        const vector = item.embedding;
        if (!Array.isArray(vector) || !vector.every((x) => typeof x === 'number' && Number.isFinite(x))) {
          throw new Error(
            `the embeddings endpoint ${endpoint} answered an embedding that is not a list of numbers`,
          );
        }
        vectors[at] = vector as number[];
      }
      if (vectors.length !== texts.length || vectors.some((v) => v === undefined)) {
        throw new Error(
          `the embeddings endpoint ${endpoint} answered ${data.length} embeddings for ${texts.length} texts`,
        );
      }
      return vectors;
    },
  };
}
