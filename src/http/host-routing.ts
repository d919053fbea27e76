import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../config/config';
import { errorBody } from '../errors/app-error';

/** Liveness and readiness: answered on every host, and not logged (probes say nothing new). */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
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
    if (PROBE_PATHS.has(path)) return next();
    const forwarded = config.trustProxy ? req.headers['x-forwarded-host'] : undefined;
    const host = (typeof forwarded === 'string' ? forwarded : (req.headers.host ?? '')).toLowerCase();
    const allowed =
      (host === authHost && (AUTH_EXACT.has(path) || AUTH_PREFIXES.some((p) => path.startsWith(p)))) ||
      (host === consoleHost && (CONSOLE_EXACT.has(path) || CONSOLE_PREFIXES.some((p) => path.startsWith(p))));
    if (allowed) return next();
    res.status(404);
    res.json(errorBody('not_found', config.nodeEnv === 'development' ? hint(config, path) : 'No such resource.'));
  };
}

/**
 * Development only: a developer who opened the wrong host (the API's root, say) is told where
 * the path is served. Production keeps the bare answer, which reveals nothing about the layout.
 */
function hint(config: AppConfig, path: string): string {
  const onAuth = AUTH_EXACT.has(path) || AUTH_PREFIXES.some((p) => path.startsWith(p));
  const onConsole = CONSOLE_EXACT.has(path) || CONSOLE_PREFIXES.some((p) => path.startsWith(p));
  if (onAuth) return `No such resource on this host. ${path} is served on ${config.authOrigin}.`;
  if (onConsole)
    return `No such resource on this host. ${path} is served on ${config.consoleOrigin}; the console is ${config.consoleOrigin}/.`;
  return `No such resource. The console is ${config.consoleOrigin}/ and the API is under ${config.authOrigin}/t/, /management-auth/ and /management/.`;
}
