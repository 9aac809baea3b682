/**
 * A fake OpenAI-compatible embeddings server on loopback (`POST /v1/embeddings` with `{model, input}`,
 * answering `{data: [{index, embedding}]}`), deterministic: words of the same concept (car, automobile,
 * vehicle...) share a dimension, every other word lands on a hashed one, so that texts about the same thing
 * are similar without sharing a word. It can hold its answers until released, or fail.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const CONCEPTS = [
  ['car', 'automobile', 'vehicle', 'sedan', 'drive', 'driving'],
  ['dog', 'puppy', 'canine', 'hound', 'pup'],
  ['money', 'cash', 'dollars', 'payment', 'salary', 'invoice'],
  ['happy', 'joyful', 'glad', 'cheerful'],
  ['doctor', 'physician', 'clinic', 'appointment'],
];
const DIMENSIONS = 64;

export function fakeEmbedding(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const concept = CONCEPTS.findIndex((words) => words.includes(word));
    if (concept >= 0) vector[concept] = (vector[concept] as number) + 1;
    else {
      let hash = 0;
      for (const ch of word) hash = (hash * 31 + (ch.codePointAt(0) as number)) >>> 0;
      const at = CONCEPTS.length + (hash % (DIMENSIONS - CONCEPTS.length));
      vector[at] = (vector[at] as number) + 0.25;
    }
  }
  return vector;
}

export interface FakeEmbeddings {
  url: string;
  /** Every input text asked for, in order. */
  inputs: string[];
  /** Requests answered or waiting. */
  requests: number;
  /** While true, answers wait until `release()`. */
  hold: boolean;
  release(): void;
  /** While set, every request answers this status. */
  failWith: number | undefined;
  close(): Promise<void>;
}

export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  let waiting: (() => void)[] = [];
  const fake: FakeEmbeddings = {
    url: '',
    inputs: [],
    requests: 0,
    hold: false,
    release: () => {
      const now = waiting;
      waiting = [];
      for (const go of now) go();
    },
    failWith: undefined,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      fake.requests++;
      const answer = () => {
        if (req.url !== '/v1/embeddings' || req.method !== 'POST') {
          res.writeHead(404).end();
          return;
        }
        if (fake.failWith !== undefined) {
          res.writeHead(fake.failWith, { 'content-type': 'application/json' }).end('{"error":"down"}');
          return;
        }
        const { input } = JSON.parse(body) as { input: string[] };
        fake.inputs.push(...input);
        const data = input.map((text, index) => ({
          object: 'embedding',
          index,
          embedding: fakeEmbedding(text),
        }));
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'list', data }));
      };
      if (fake.hold) waiting.push(answer);
      else answer();
    });
  });
  server.closeAllConnections?.();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
