/**
 * The Content-Security-Policy of the pages (/console, /docs), replacing the API's `default-src 'none'`:
 * scripts, styles, fonts and fetches from this origin only (images also as data: URLs), no inline script or
 * style, no eval, no form posted anywhere, no framing.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

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
