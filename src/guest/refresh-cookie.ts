import type { Request, Response } from 'express';
import { expireHostCookie, readCookie, setHostCookie } from '../http/cookies';
import type { AppConfig } from '../config/config';
import type { Issued } from './customer-sessions';
import { registeredCorsOrigin } from './tenant-cors';
import type { ClientRecord } from '../directory/records';

/**
 * The HttpOnly refresh cookie of browser clients (issue 22 finding 7; spec 4.3 rule 4: "browser
 * clients may also get the usual HttpOnly session cookie"). A refresh token in `localStorage` is
 * readable by every script of the game's page (ad SDKs included); in this cookie no script reads
 * it, and the browser presents it to `POST /t/{tenantId}/token` and `revoke` by itself.
 *
 * One cookie per tenant and client: cookies are host-wide (`__Host-` forces `Path=/`), so a
 * browser that plays two tenants' games, or two clients of one tenant, on one auth host keeps each
 * session apart, and a request for one client never reads another's cookie. Tenant ids never hold
 * a dot and client ids never do, so the name is unambiguous.
 */
export const refreshCookieName = (tenantId: string, clientId: string): string =>
  `__Host-svc_refresh_${tenantId}.${clientId}`;

/** The refresh cookie of this tenant and client that the request carries, if any. */
export function readRefreshCookie(req: Request, tenantId: string, clientId: string): string | undefined {
  return readCookie(req.headers.cookie, refreshCookieName(tenantId, clientId));
}

/**
 * Sets the cookie on an answer that carries a refresh token to a browser client, never to a native
 * one (native shells keep it in a secure-storage adapter, spec 4.3 rule 4). As with flow cookies
 * (contract 11), a request that came by CORS from a registered web origin gets `SameSite=None;
 * Partitioned`, so a game on another site keeps the cookie in its own partition; any other gets
 * `SameSite=Lax`. It lives as long as an idle session does (contract 13): each refresh renews it.
 */
export function setRefreshCookie(
  req: Request,
  res: Response,
  client: Pick<ClientRecord, 'tenantId' | 'id' | 'type'>,
  tokens: { readonly refresh_token?: string },
  idleTtlSeconds: number,
): void {
  if (client.type !== 'browser' || tokens.refresh_token === undefined) return;
  setHostCookie(
    res,
    refreshCookieName(client.tenantId, client.id),
    tokens.refresh_token,
    idleTtlSeconds,
    crossSite(req) ? 'none' : 'lax',
  );
}

/** The answer of a token-set route, with the refresh cookie set when its client is a browser client. */
export function withRefreshCookie<T extends { readonly refresh_token?: string }>(
  req: Request,
  res: Response,
  issued: Issued<T>,
  config: Pick<AppConfig, 'customerSessions'>,
): T {
  setRefreshCookie(req, res, issued.client, issued.answer, config.customerSessions.idleTtl);
  return issued.answer;
}

/**
 * Expires the cookie (a refused refresh, a revocation, an erased account). The expiry must carry
 * the attributes the cookie was set with: a partitioned cookie is only reached by a partitioned
 * expiry from the same partition.
 */
export function clearRefreshCookie(req: Request, res: Response, tenantId: string, clientId: string): void {
  expireHostCookie(res, refreshCookieName(tenantId, clientId), crossSite(req) ? 'none' : 'lax');
}

const crossSite = (req: Request): boolean => registeredCorsOrigin(req) !== undefined;
