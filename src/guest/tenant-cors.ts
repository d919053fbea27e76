import cors, { type CorsOptions } from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors/app-error';
import type { TenantWebOrigins } from './tenant-web-origins';

const TENANT_PATH = /^\/t\/([^/]+)\/(.+)$/;
const PUBLIC_DOCUMENTS = /^\.well-known\/(openid-configuration|jwks\.json)$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Requests this middleware let through as CORS requests of a registered web origin. */
const corsRequests = new WeakMap<Request, string>();

/**
 * The registered web origin a request came from by CORS, or undefined: flow cookies set in its
 * answer must survive a cross-site page (contract section 11).
 */
export function registeredCorsOrigin(req: Request): string | undefined {
  return corsRequests.get(req);
}

const CREDENTIALED: CorsOptions = {
  credentials: true,
  methods: ['POST', 'GET'],
  allowedHeaders: ['authorization', 'content-type'],
  optionsSuccessStatus: 204,
};

/**
 * CORS on the tenant API, the one place it is decided (contract section 11):
 * - discovery and JWKS are readable from any origin, without credentials;
 * - a request or preflight whose `Origin` is a web origin of an enabled browser client of the
 *   active tenant gets that origin echoed with credentials allowed and `Vary: Origin`; a preflight
 *   names no client, so any browser client of the tenant counts for it; a preflight answers 204
 *   allowing POST, GET and the headers `authorization, content-type`;
 * - a non-GET request whose `Origin` is present but is not a web origin of the `client_id` its
 *   body names is refused with 403 before any handler runs, which also closes cross-site request
 *   forgery on the flow endpoints; requests without `Origin` (servers, native shells) pass;
 * - any other origin gets no CORS headers, so the browser keeps the answer from the page.
 * Mounted after the body parsers, so a form or JSON `client_id` is already read.
 */
export function tenantCors(origins: TenantWebOrigins): RequestHandler {
  const anyOrigin = cors({ origin: '*', methods: ['GET'], optionsSuccessStatus: 204 });
  // Called only once the origin has been found registered: `origin: true` echoes it.
  const registered = cors({ ...CREDENTIALED, origin: true });

  return (req: Request, res: Response, next: NextFunction): void => {
    const match = TENANT_PATH.exec(req.path);
    if (!match) return next();
    const [, tenantId = '', rest = ''] = match;
    if (PUBLIC_DOCUMENTS.test(rest)) return anyOrigin(req, res, next);
    // Answers differ by Origin (CORS headers or a 403), so shared caches must key on it.
    res.vary('Origin');
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    allowed(origins, req, tenantId, origin).then(
      (ok) => {
        if (ok) {
          corsRequests.set(req, origin);
          registered(req, res, next);
        } else if (!SAFE_METHODS.has(req.method)) {
          next(new AppError('forbidden', 'The Origin is not a web origin of this client.'));
        } else {
          next();
        }
      },
      (err: unknown) => next(err),
    );
  };
}

function allowed(origins: TenantWebOrigins, req: Request, tenantId: string, origin: string): Promise<boolean> {
  if (SAFE_METHODS.has(req.method)) return origins.isWebOriginOfTenant(tenantId, origin);
  const body: unknown = req.body;
  const clientId = typeof body === 'object' && body !== null ? (body as { client_id?: unknown }).client_id : undefined;
  if (typeof clientId !== 'string') return Promise.resolve(false);
  return origins.isWebOriginOfClient(tenantId, clientId, origin);
}
