/**
 * Builds the API reference page (/docs) into `out` (dist/web/docs): Swagger UI's prebuilt browser bundle and
 * stylesheet, copied from the swagger-ui-dist package (with its licence files), and the page's own HTML,
 * init script and stylesheet from src/web/docs. Nothing is fetched at run time: the page loads only these
 * files and the service's /api/ac/openapi.json.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Files taken from node_modules/swagger-ui-dist, under the names the page loads them by. */
const VENDOR = [
  ['swagger-ui-bundle.js', 'swagger-ui-bundle.js'],
  ['swagger-ui-bundle.js.LICENSE.txt', 'swagger-ui-bundle.js.LICENSE.txt'],
  ['swagger-ui.css', 'swagger-ui.css'],
  ['LICENSE', 'swagger-ui-LICENSE.txt'],
  ['NOTICE', 'swagger-ui-NOTICE.txt'],
];

export async function buildDocs(root, out) {
  mkdirSync(out, { recursive: true });
  const vendor = path.join(root, 'node_modules', 'swagger-ui-dist');
  for (const [from, to] of VENDOR) {
    if (from === 'swagger-ui.css') {
      // Its source map is not shipped: drop the comment that would make a browser's tools ask for it.
      const css = readFileSync(path.join(vendor, from), 'utf8').replace(
        /\/\*# sourceMappingURL=[^*]*\*\/\s*$/u,
        '',
      );
      writeFileSync(path.join(out, to), css);
    } else {
      copyFileSync(path.join(vendor, from), path.join(out, to));
    }
  }
  const own = path.join(root, 'src', 'web', 'docs');
  for (const name of readdirSync(own)) copyFileSync(path.join(own, name), path.join(out, name));
}
