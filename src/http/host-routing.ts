import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../config/config';
import { errorBody } from '../errors/app-error';

/** Liveness and readiness: answered on every host, and not logged (probes say nothing new). */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
const AUTH_PREFIXES = ['/management-auth/', '/management/', '/t/'];
const AUTH_EXACT = new Set(['/openapi.json']);
const CONSOLE_PREFIXES = ['/api/', '/assets/'];
const CONSOLE_EXACT = new Set(['/']);

export type ServingHost = 'every' | 'auth' | 'console';

/**
 * The host that serves `path`, none when no host does. An Express route path works too
 * (`/t/:tenantId/guest`): its parameters come after the prefix that decides.
 */
export function hostServing(path: string): ServingHost | undefined {
  if (PROBE_PATHS.has(path)) return 'every';
  if (AUTH_EXACT.has(path) || AUTH_PREFIXES.some((p) => path.startsWith(p))) return 'auth';
  if (CONSOLE_EXACT.has(path) || CONSOLE_PREFIXES.some((p) => path.startsWith(p))) return 'console';
  return undefined;
}

/**
 * Routing by Host (contract section 1): the auth host serves the API, the console host the BFF
 * and its page. Any other host, or a path on the wrong host, is 404 before any handler runs.
 * X-Forwarded-Host counts only behind a trusted proxy, and then only its right-most entry
 * (`forwardedHost`); without the header, Host decides.
 */
export function hostRouting(config: AppConfig): (req: Request, res: Response, next: NextFunction) => void {
  const authUrl = new URL(config.authOrigin);
  const consoleUrl = new URL(config.consoleOrigin);
  return (req, res, next) => {
    const path = req.path;
    const serving = hostServing(path);
    if (serving === 'every') return next();
    const forwarded = config.trustProxy ? forwardedHost(req.headers['x-forwarded-host']) : undefined;
    const host = forwarded ?? req.headers.host ?? '';
    const allowed = (serving === 'auth' && names(host, authUrl)) || (serving === 'console' && names(host, consoleUrl));
    if (allowed) return next();
    res.status(404);
    res.json(
      errorBody('not_found', config.nodeEnv === 'development' ? hint(config, path, serving) : 'No such resource.'),
    );
  };
}

const DEFAULT_PORT: Record<string, string> = { 'https:': '443', 'http:': '80' };

/**
 * Whether a Host (or X-Forwarded-Host) value names the origin's authority (RFC 9110 §7.2): letter
 * case aside, and with or without the scheme's default port, which `URL.host` never shows but a
 * client or a proxy passing the client's Host on (`$http_host`) may write. Nothing else is
 * normalised: another port, a trailing dot or userinfo names another authority.
 */
function names(host: string, origin: URL): boolean {
  const h = host.toLowerCase();
  const port = DEFAULT_PORT[origin.protocol];
  const bare = port !== undefined && h.endsWith(`:${port}`) ? h.slice(0, -port.length - 1) : h;
  return bare === origin.host;
}

/**
 * The host an X-Forwarded-Host header names, undefined when there is none. A proxy that appends
 * to the header a client sent (`a.example, auth.example`, or the header twice, which arrives
 * joined) leaves its own entry right-most: that one is taken, as client-ip.ts takes the
 * X-Forwarded-For entries our proxies added; anything further left was chosen by the client. An
 * empty right-most entry names no host (it matches none), never the entry before it.
 */
export function forwardedHost(header: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(header) ? header.join(',') : header;
  if (joined === undefined) return undefined;
  return joined.slice(joined.lastIndexOf(',') + 1).trim();
}

/**
 * Development only: a developer who opened the wrong host (the API's root, say) is told where
 * the path is served. Production keeps the bare answer, which reveals nothing about the layout.
 */
function hint(config: AppConfig, path: string, serving: ServingHost | undefined): string {
  if (serving === 'auth') return `No such resource on this host. ${path} is served on ${config.authOrigin}.`;
  if (serving === 'console')
    return `No such resource on this host. ${path} is served on ${config.consoleOrigin}; the console is ${config.consoleOrigin}/.`;
  return `No such resource. The console is ${config.consoleOrigin}/ and the API is under ${config.authOrigin}/t/, /management-auth/ and /management/.`;
}
