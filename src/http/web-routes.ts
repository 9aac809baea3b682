/**
 * The pages a person opens in a browser, served by the service itself: the console (/console) and the API
 * reference (/docs). Each serves its own bundled files from dist/web with a Content-Security-Policy of its
 * own that replaces the API's `default-src 'none'`.
 */
import { Router } from 'express';
import { consoleRoutes } from './console-routes.js';
import { docsRoutes } from './docs-routes.js';

export function webRoutes(): Router {
  const router = Router();
  router.use(consoleRoutes());
  router.use(docsRoutes());
  return router;
}
