/**
 * Builds the web console (src/web/console, preact and TSX) into `out`: index.html, one minified JS bundle
 * and one CSS file, both named by a hash of their content, and the icon. The page loads nothing else:
 * no CDN, no inline script or style, so that the console's strict Content-Security-Policy
 * (src/http/console-routes.ts) holds.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

export async function buildConsole(root, out) {
  const src = path.join(root, 'src', 'web', 'console');
  mkdirSync(out, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: path.join(src, 'main.tsx') },
    outdir: out,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox111', 'safari16.4'],
    tsconfig: path.join(root, 'tsconfig.web.json'),
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'none',
    sourcemap: false,
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => path.basename(file));
  const js = outputs.find((file) => file.endsWith('.js'));
  const css = outputs.find((file) => file.endsWith('.css'));
  if (!js || !css)
    throw new Error(`build-console: expected one .js and one .css output, got ${outputs.join(', ')}`);
  const html = readFileSync(path.join(src, 'index.html'), 'utf8').replace('%JS%', js).replace('%CSS%', css);
  writeFileSync(path.join(out, 'index.html'), html);
  copyFileSync(path.join(src, 'icon.svg'), path.join(out, 'icon.svg'));
}
