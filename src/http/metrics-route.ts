/**
 * GET /metrics: the service's metrics in Prometheus' text format, for a scraper holding AC_METRICS_TOKEN
 * (`Authorization: Bearer <token>`). Mounted only when the token is set: off by default, since the figures
 * (operations, providers, accounts' activity) are the operator's business. A wrong token is the same JSON
 * 401 as any other.
 */
import { Router as createRouter, type Router } from 'express';
import { AppError } from '../core/errors.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { bearerMatches } from './request-key.js';

export const METRICS_PATH = '/metrics';

export function metricsRoute(metrics: ServiceMetrics, token: string): Router {
  const router = createRouter();
  router.get(METRICS_PATH, async (req, res) => {
    res.locals.operation = 'metrics';
    if (!bearerMatches(req, token)) {
      throw new AppError('unauthorized', 'GET /metrics needs "Authorization: Bearer <AC_METRICS_TOKEN>".');
    }
    const text = await metrics.registry.metrics();
    res.type(metrics.registry.contentType).send(text);
  });
  return router;
}
