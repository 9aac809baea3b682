/**
 * Builds dist/ once before the suite, so tests that spawn the CLI run what `npm start` runs, as `npm run
 * build` does: tsc, then the .sql files tsc does not copy (scripts/copy-sql.mjs). Output of a source that
 * no longer exists (a module moved or removed) is deleted first: tsc never deletes it, and it would be
 * packed and run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

function removeStaleOutput(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    // dist/web is the browser pages' bundles, rebuilt whole by scripts/build-web.mjs.
    if (entry.isDirectory()) {
      if (file !== path.join('dist', 'web')) removeStaleOutput(file);
    } else if (/\.(js|js\.map)$/u.test(entry.name)) {
      const source = path.join('src', path.relative('dist', file)).replace(/\.js(\.map)?$/u, '.ts');
      if (!existsSync(source)) rmSync(file);
    }
  }
}

export default function setup(): void {
  removeStaleOutput('dist');
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
  });
  execFileSync(process.execPath, ['scripts/copy-sql.mjs'], { stdio: 'inherit' });
  execFileSync(process.execPath, ['scripts/build-web.mjs'], { stdio: 'inherit' });
}
