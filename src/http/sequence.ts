/**
 * Middlewares that every request passes through, run one after another as one Express layer: the same
 * calls in the same order, without a walk of Express's layer stack between them. A middleware's error
 * (thrown, passed to `next`, or a rejected promise) goes to Express's error handling as usual.
 */
import type { RequestHandler } from 'express';

export function sequence(handlers: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let index = 0;
    const step = (err?: unknown): void => {
      // 'route' skips to the next route, which for a middleware is the next middleware.
      if (err !== undefined && err !== null && err !== false && err !== 'route') {
        next(err);
        return;
      }
      const handler = handlers[index++];
      if (!handler) {
        next();
        return;
      }
      try {
        const returned: unknown = handler(req, res, step);
        // As Express 5 does, a promise rejected with nothing is still an error.
        if (returned instanceof Promise)
          returned.catch((e: unknown) => next(e ?? new Error('Rejected promise')));
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}
