import { param } from '../http/openapi/requests';
import { ASSET, ERRORS, html, ok, pick } from '../http/openapi/responses';
import { obj, str } from '../http/openapi/schema';
import type { RouteDeclaration } from '../http/route';

const tags = ['console'];

/** The console page and its backend-for-frontend (contract section 4), on the console host. */
export const CONSOLE_ROUTES = {
  page: {
    method: 'GET',
    path: '/',
    policy: 'public',
    operation: {
      operationId: 'getConsolePage',
      tags,
      summary: 'Console page (console host)',
      responses: { 200: html('the console page', '<!doctype html><html lang="en"><title>Console</title>…</html>') },
    },
  },
  asset: {
    method: 'GET',
    path: '/assets/:name',
    policy: 'public',
    cache: 'no-cache',
    operation: {
      operationId: 'getConsoleAsset',
      tags,
      summary: 'Console page assets (console host); ETag, and 304 to a matching If-None-Match',
      parameters: [param('name', 'path')],
      responses: { 200: ASSET, 304: { description: 'unchanged since the ETag given' }, 404: ERRORS[404] },
    },
  },
  /** Exact console Origin (spec 5): a cross-site page cannot start a sign-in in the user's name. */
  start: {
    method: 'POST',
    path: '/api/auth/start',
    policy: 'origin:console',
    budget: 'console-start',
    operation: {
      operationId: 'startConsoleSignIn',
      tags,
      summary: 'Start a console sign-in (exact console Origin)',
      responses: {
        303: { description: 'Redirect to the authorize endpoint; sets __Host-svc_control_flow' },
        ...pick(403, 429, 503),
      },
    },
  },
  /**
   * Public: it is reached by a redirect from the auth host, so the flow cookie and the state,
   * not an Origin, bind it to the browser that started the sign-in.
   */
  callback: {
    method: 'GET',
    path: '/api/auth/callback',
    policy: 'public',
    sideEffects: true,
    operation: {
      operationId: 'consoleSignInCallback',
      tags,
      summary: 'OAuth callback of the console',
      parameters: [param('code', 'query', false), param('state', 'query', false)],
      responses: { 303: { description: 'Redirect to / or /?error=<code>; sets __Host-svc_console on success' } },
    },
  },
  current: {
    method: 'GET',
    path: '/api/auth/current',
    policy: 'console-session',
    operation: {
      operationId: 'getConsoleUser',
      tags,
      summary: 'The signed-in developer, via the console session',
      responses: {
        200: ok('user', obj({ user: obj({ id: str(), email: str(), email_verified: { type: 'boolean' } }) })),
        401: ERRORS[401],
        503: ERRORS[503],
      },
    },
  },
  /** `console-session` on a POST also requires the exact console Origin (see its authenticator). */
  signOut: {
    method: 'POST',
    path: '/api/auth/sign-out',
    policy: 'console-session',
    status: 204,
    operation: {
      operationId: 'signOutOfConsole',
      tags,
      summary: 'Sign out (exact console Origin)',
      responses: { 204: { description: 'signed out; cookie expired' }, ...pick(401, 403, 503) },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
