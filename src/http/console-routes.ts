/**
 * The web console at /console: index.html and its bundled files from dist/web/console (built by
 * scripts/web/build-console.mjs), each with a Content-Security-Policy of the console's own that replaces
 * the API's `default-src 'none'`: scripts, styles, fonts and images from this origin only (images also as
 * data: URLs), fetches to this origin only, no inline script or style, no forms posted anywhere, no
 * framing. Only the files the build wrote are served; any other path under /console is a JSON 404.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Response, Router } from 'express';
import { AppError } from '../core/errors.js';
import { PAGE_CSP, webDir } from './web-dir.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

interface ConsoleFile {
  body: Buffer;
  type: string;
  /** Named by a hash of its content: it may be cached for good. */
  immutable: boolean;
}

/** Reads the built console once; undefined while it has not been built (then each request looks again). */
function loadFiles(dir: string): Map<string, ConsoleFile> | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  if (!names.includes('index.html')) return undefined;
  const files = new Map<string, ConsoleFile>();
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (type === undefined) continue;
    files.set(name, {
      body: readFileSync(path.join(dir, name)),
      type,
      immutable: /-[A-Z0-9]{8,}\.(js|css)$/u.test(name),
    });
  }
  return files;
}

function send(res: Response, file: ConsoleFile, head: boolean): void {
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('Content-Type', file.type);
  res.setHeader('Content-Length', String(file.body.length));
  if (file.immutable) res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  res.status(200);
  if (head) res.end();
  else res.end(file.body);
}

export function consoleRoutes(): Router {
  const router = Router();
  const dir = webDir('console');
  let files: Map<string, ConsoleFile> | undefined;
  const built = (): Map<string, ConsoleFile> => {
    files ??= loadFiles(dir);
    if (files === undefined) {
      throw new AppError('not_found', 'The console is not built here: run `npm run build`, then reload.');
    }
    return files;
  };
  router.get(['/console', '/console/'], (req, res) => {
    res.locals.operation = 'console';
    send(res, built().get('index.html') as ConsoleFile, req.method === 'HEAD');
  });
  router.get('/console/*rest', (req, res) => {
    res.locals.operation = 'console';
    const name = req.path.slice('/console/'.length);
    const file = built().get(name);
    if (file === undefined || name.includes('/')) {
      throw new AppError(
        'not_found',
        `There is no file ${req.path} in the console; the console is at /console.`,
      );
    }
    send(res, file, req.method === 'HEAD');
  });
  return router;
}
