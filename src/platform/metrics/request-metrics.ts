import type { NextFunction, Request, Response } from 'express';
import type { MetricsService } from './metrics.service';

/**
 * Counts and times every request by its route pattern (never the raw path, which would let
 * clients create unbounded label values).
 */
export function requestMetrics(metrics: MetricsService): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const started = performance.now();
    res.once('finish', () => {
      const routePath = (req.route as { path?: unknown } | undefined)?.path;
      const labels = {
        route: typeof routePath === 'string' ? `${req.baseUrl}${routePath}` : 'unmatched',
        method: req.method,
        status: String(res.statusCode),
      };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, (performance.now() - started) / 1000);
    });
    next();
  };
}
