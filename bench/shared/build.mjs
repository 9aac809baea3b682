/**
 * Where the checkout and its build are, for every benchmark: the repository's root, the built CLI (`dist/cli.js`,
 * what `npm run build` writes) and the built modules. Plain JavaScript, so that a benchmark run by plain node
 * (search/search-index.mjs) shares it with those run by tsx (build.d.mts types it for them).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The built `agent-context` CLI. */
export const BUILT_CLI = path.join(ROOT, 'dist', 'cli.js');

/** A built module of dist/, by its path there (`core/core.js`). */
export function importBuilt(module) {
  return import(path.join(ROOT, 'dist', module));
}

/** Fails when the CLI has not been built. */
export function assertBuilt() {
  if (!existsSync(BUILT_CLI))
    throw new Error(`${BUILT_CLI} is missing: run "npm run build" first (npm run bench does).`);
}
