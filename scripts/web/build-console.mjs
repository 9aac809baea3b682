import { mkdirSync } from 'node:fs';

/** Placeholder until the console page lands. */
export async function buildConsole(_root, out) {
  mkdirSync(out, { recursive: true });
}
