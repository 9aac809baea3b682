/**
 * Builds the browser pages into dist/web, from scratch each time: the console (src/web/console, bundled by
 * esbuild; scripts/web/build-console.mjs) and the API reference page (scripts/web/build-docs.mjs). Run by
 * `npm run build` and by the tests' global set-up, after tsc. Nothing here is fetched at run time: every
 * file a page loads is in dist/web.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConsole } from './web/build-console.mjs';
import { buildDocs } from './web/build-docs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist', 'web');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await buildConsole(root, path.join(out, 'console'));
await buildDocs(root, path.join(out, 'docs'));
