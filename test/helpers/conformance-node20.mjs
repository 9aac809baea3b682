/**
 * Lets @modelcontextprotocol/conformance (0.2.0-alpha.x) run on Node 20, which this project supports
 * (engines: node >= 20.19). Load it with `node --import ./test/helpers/conformance-node20.mjs <conformance>`.
 *
 * Why: the suite's dist/index.js imports `globSync` from "fs", which Node only has from 22 on, so on Node 20 it
 * dies at import (SyntaxError: The requested module 'fs' does not provide an export named 'globSync'). Its only
 * use is `globSync('**\/checks.json', { cwd })`, when it sums up a results directory.
 *
 * What: when fs.globSync is missing, a resolve hook hands the conformance package's own import of `fs` a shim:
 * all of node:fs plus a minimal globSync for `**\/<file name>` patterns. On Node >= 22 it registers nothing.
 */
import fs from 'node:fs';
import { register } from 'node:module';

// The same file is the hooks module: Node loads it again on its hooks thread, marked by the query.
const ON_HOOKS_THREAD = new URL(import.meta.url).searchParams.has('hooks');
if (typeof fs.globSync !== 'function' && !ON_HOOKS_THREAD) register(`${import.meta.url}?hooks`);

// Everything from node:fs, and globSync('**/<name>', { cwd }): the paths (relative to cwd) of the files so named
// anywhere under cwd, as Node 22's globSync gives them. Any other pattern throws rather than match wrongly.
const SHIM = `data:text/javascript,${encodeURIComponent(`
import { readdirSync } from 'node:fs';
import { basename } from 'node:path';
export * from 'node:fs';
export { default } from 'node:fs';
export function globSync(pattern, { cwd = '.' } = {}) {
  const name = /^\\*\\*\\/([^*?/[\\]{}!]+)$/.exec(pattern)?.[1];
  if (name === undefined) throw new Error('conformance-node20 globSync shim: unsupported pattern ' + pattern);
  return readdirSync(cwd, { recursive: true, encoding: 'utf8' }).filter((file) => basename(file) === name);
}
`)}`;

/** Resolve hook: only `fs` as imported by the conformance package's own code goes to the shim. */
export async function resolve(specifier, context, nextResolve) {
  if (
    (specifier === 'fs' || specifier === 'node:fs') &&
    context.parentURL?.includes('/node_modules/@modelcontextprotocol/conformance/dist/')
  )
    return { url: SHIM, shortCircuit: true };
  return nextResolve(specifier, context);
}
