/**
 * The API reference page (/docs): Swagger UI rendering /api/ac/openapi.json, built into dist/web/docs by
 * scripts/web/build-docs.mjs. Its answers carry a Content-Security-Policy of their own, replacing the API's
 * `default-src 'none'`: scripts, styles, fonts and fetches from this origin only, no inline script or
 * style, no eval. Only the files of the built page are served; any other path under /docs falls through to
 * the service's 404.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import express, { type Response, Router } from 'express';
import { AppError } from '../core/errors.js';
import { PAGE_CSP, webDir } from './web-dir.js';

function pageHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  // The page's files hold no secret: let the browser keep them, asking each time whether they changed.
  res.setHeader('Cache-Control', 'no-cache');
}

export function docsRoutes(): Router {
  const dir = webDir('docs');
  const router = Router();
  router.get(['/docs', '/docs/'], (_req, res, next) => {
    res.locals.operation = 'docs';
    if (!existsSync(path.join(dir, 'index.html'))) {
      throw new AppError(
        'not_found',
        'The API reference is not built here: run `npm run build`, then reload.',
      );
    }
    pageHeaders(res);
    res.type('html');
    res.sendFile('index.html', { root: dir }, (err) => {
      if (err) next(err);
    });
  });
  router.use(
    '/docs',
    express.static(dir, {
      index: false,
      redirect: false,
      dotfiles: 'ignore',
      fallthrough: true,
      setHeaders: pageHeaders,
    }),
  );
  return router;
}
