import { Router } from 'express';

/** Placeholder until the console page lands. */
export function consoleRoutes(): Router {
  return Router();
}
