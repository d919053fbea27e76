import cors, { type CorsOptions } from 'cors';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { decodeJwt } from 'jose';
import { AppError } from '../errors/app-error';
import { parseBearer } from '../http/bearer-token';
import type { TenantWebOrigins } from './tenant-web-origins';

const TENANT_PATH = /^\/t\/([^/]+)\/(.+)$/;
const PUBLIC_DOCUMENTS = /^\.well-known\/(openid-configuration|jwks\.json)$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/**
 * Sign in with Apple's form_post answer (contract 14) comes cross-site from the provider's origin
 * and names no client. Its handler reads and writes nothing: it sends the browser on to the GET
 * callback, where the state's binding to the flow's cookie is checked.
 */
const FORM_POST_CALLBACK = /^providers\/callback$/;

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
  // DELETE: a player deletes its own account from the game's page (contract 13, DELETE /me).
  methods: ['POST', 'GET', 'DELETE'],
  allowedHeaders: ['authorization', 'content-type'],
  // The SDK on a game's page honours Retry-After on 429 and 503 (contract 13), and a game reports
  // the request id of a failure; a cross-origin page reads only the response headers exposed to it.
  exposedHeaders: ['Retry-After', 'X-Request-Id'],
  // No Access-Control-Max-Age: a preflight cached while the client was enabled would let the page
  // send a request that a disabled client's answer, without CORS headers, turns into a network
  // error the SDK retries, where the uncached preflight gives the page the service's invalid_client.
  optionsSuccessStatus: 204,
};

/**
 * CORS on the tenant API, the one place it is decided (contract section 11):
 * - discovery and JWKS are readable from any origin, without credentials;
 * - a request or preflight whose `Origin` is a web origin of an enabled browser client of the
 *   active tenant gets that origin echoed with credentials allowed and `Vary: Origin`; a preflight
 *   names no client, so any browser client of the tenant counts for it; a preflight answers 204
 *   allowing POST, GET, DELETE (contract 13) and the headers `authorization, content-type`;
 * - a non-GET request whose `Origin` is present but is not a web origin of the client it names
 *   (see clientNamedBy) is refused with 403 before any handler runs, which also closes cross-site
 *   request forgery on the flow endpoints; requests without `Origin` (servers, native shells) pass;
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
    if (req.method === 'POST' && FORM_POST_CALLBACK.test(rest)) return next();
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
  const clientId = clientNamedBy(req);
  if (clientId === undefined) return Promise.resolve(false);
  return origins.isWebOriginOfClient(tenantId, clientId, origin);
}

/**
 * The client a non-GET request acts for: the `client_id` of its body, except for a DELETE, which
 * acts for the client of its bearer token whatever a body says (`DELETE /me`, contract 13: the
 * Origin must be a web origin of the token's client). That audience is read here before the token
 * is verified, which is safe: the bearer check that follows verifies the token and refuses it
 * unless its audience is the client of its live session, so a forged audience gets a request no
 * further than a 401.
 */
function clientNamedBy(req: Request): string | undefined {
  if (req.method === 'DELETE') return bearerAudience(req);
  const body: unknown = req.body;
  const clientId = typeof body === 'object' && body !== null ? (body as { client_id?: unknown }).client_id : undefined;
  return typeof clientId === 'string' ? clientId : undefined;
}

function bearerAudience(req: Request): string | undefined {
  const token = parseBearer(req.headers.authorization);
  if (token === null) return undefined;
  try {
    const { aud } = decodeJwt(token);
    return typeof aud === 'string' ? aud : undefined;
  } catch {
    return undefined;
  }
}
