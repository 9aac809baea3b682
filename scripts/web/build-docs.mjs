import { mkdirSync } from 'node:fs';

/** Placeholder until the docs page lands. */
export async function buildDocs(_root, out) {
  mkdirSync(out, { recursive: true });
}
