/**
 * Copies what tsc does not build: every .sql file under src/ to the same path under dist/ (the PostgreSQL
 * store's migrations, read at run time next to the module that applies them), and deletes a .sql file in
 * dist/ whose source is gone, so that a removed migration is never packed. Run by `npm run build` and by
 * the tests' global set-up, after tsc.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');
const dist = path.join(root, 'dist');

/** The .sql files under `dir`, as paths relative to `dir`. */
function sqlFiles(dir, prefix = '') {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) return sqlFiles(path.join(dir, entry.name), relative);
    return entry.name.endsWith('.sql') ? [relative] : [];
  });
}

const sources = new Set(sqlFiles(src));
for (const stale of sqlFiles(dist).filter((file) => !sources.has(file))) rmSync(path.join(dist, stale));
for (const file of sources) {
  mkdirSync(path.dirname(path.join(dist, file)), { recursive: true });
  copyFileSync(path.join(src, file), path.join(dist, file));
}
