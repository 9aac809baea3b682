import { Router } from 'express';

/** Placeholder until the docs page lands. */
export function docsRoutes(): Router {
  return Router();
}
