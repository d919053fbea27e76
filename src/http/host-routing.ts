import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../config/config';
import { errorBody } from '../errors/app-error';

const EVERY_HOST = new Set(['/healthz', '/readyz']);
const AUTH_PREFIXES = ['/management-auth/', '/management/', '/t/'];
const AUTH_EXACT = new Set(['/openapi.json']);
const CONSOLE_PREFIXES = ['/api/', '/assets/'];
const CONSOLE_EXACT = new Set(['/']);

/**
 * Routing by Host (contract section 1): the auth host serves the API, the console host the BFF
 * and its page. Any other host, or a path on the wrong host, is 404 before any handler runs.
 * X-Forwarded-Host counts only behind a trusted proxy.
 */
export function hostRouting(config: AppConfig): (req: Request, res: Response, next: NextFunction) => void {
  const authHost = new URL(config.authOrigin).host.toLowerCase();
  const consoleHost = new URL(config.consoleOrigin).host.toLowerCase();
  return (req, res, next) => {
    const path = req.path;
    if (EVERY_HOST.has(path)) return next();
    const forwarded = config.trustProxy ? req.headers['x-forwarded-host'] : undefined;
    const host = (typeof forwarded === 'string' ? forwarded : (req.headers.host ?? '')).toLowerCase();
    const allowed =
      (host === authHost && (AUTH_EXACT.has(path) || AUTH_PREFIXES.some((p) => path.startsWith(p)))) ||
      (host === consoleHost && (CONSOLE_EXACT.has(path) || CONSOLE_PREFIXES.some((p) => path.startsWith(p))));
    if (allowed) return next();
    res.status(404).setHeader('Cache-Control', 'no-store');
    res.json(errorBody('not_found', 'No such resource.'));
  };
}
