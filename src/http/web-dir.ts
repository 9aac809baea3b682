/**
 * Where the built browser pages are (scripts/build-web.mjs writes them to dist/web): next to this module's
 * directory when it runs from dist/, or in dist/ at the repository's top when it runs from src/ (tests).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The directory of the built page `name` (`console`, `docs`) under dist/web. */
export function webDir(name: string): string {
  const top = path.resolve(here, '..');
  const dist = path.basename(top) === 'src' ? path.resolve(top, '..', 'dist') : top;
  return path.join(dist, 'web', name);
}
