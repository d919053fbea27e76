import { param, body } from '../http/openapi/requests';
import { ASSET, ERRORS, error, html, ok, pick } from '../http/openapi/responses';
import { int, obj, ref, str } from '../http/openapi/schema';
import { TOKEN_RESPONSE } from '../http/openapi/token-sets';
import type { RouteDeclaration } from '../http/route';
import { MANAGEMENT_GRANT_TYPES } from './token.service';
import { FLOW_ID_PATTERN } from '../directory/identifiers';

const tags = ['control-plane'];

/** Control-plane sign-in of developers (contract section 3), on the auth host. */
export const MANAGEMENT_AUTH_ROUTES = {
  discovery: {
    method: 'GET',
    path: '/t/control-plane/.well-known/openid-configuration',
    policy: 'public',
    cache: 'public, max-age=300',
    operation: {
      operationId: 'getControlPlaneDiscovery',
      tags,
      summary: 'Control-plane discovery',
      responses: { 200: ok('discovery document', { type: 'object' }) },
    },
  },
  jwks: {
    method: 'GET',
    path: '/t/control-plane/.well-known/jwks.json',
    policy: 'public',
    cache: 'public, max-age=300',
    operation: {
      operationId: 'getControlPlaneJwks',
      tags,
      summary: 'Control-plane public keys (RS256)',
      responses: { 200: ok('JWK Set', { type: 'object' }) },
    },
  },
  authorize: {
    method: 'GET',
    path: '/management-auth/authorize',
    policy: 'public',
    sideEffects: true,
    budget: 'authorize',
    operation: {
      operationId: 'authorize',
      tags,
      summary: 'Validate an authorization request and serve the hosted sign-in form',
      parameters: [
        'response_type',
        'client_id',
        'redirect_uri',
        'scope',
        'state',
        'code_challenge',
        'code_challenge_method',
      ].map((name) => param(name, 'query')),
      responses: {
        200: html(
          'HTML sign-in form; sets __Host-svc_control_flow',
          '<!doctype html><html lang="en"><title>Sign in</title>…</html>',
        ),
        303: { description: 'Redirect to the callback with error, state and iss' },
        400: html(
          'HTML error page: unknown client or redirect URI, or a malformed request (never redirects)',
          '<!doctype html><html lang="en"><title>Sign-in error</title>…</html>',
        ),
        ...pick(429, 503),
      },
    },
  },
  asset: {
    method: 'GET',
    path: '/management-auth/assets/:name',
    policy: 'public',
    cache: 'public, max-age=300',
    operation: {
      operationId: 'getSignInAsset',
      tags,
      summary: 'Script, stylesheet and icon of the sign-in form',
      parameters: [param('name', 'path')],
      responses: { 200: ASSET, 404: ERRORS[404] },
    },
  },
  emailStart: {
    method: 'POST',
    path: '/management-auth/email/start',
    policy: 'origin:auth',
    handlerChecks: ['controlFlowCookie'],
    status: 202,
    operation: {
      operationId: 'startManagementEmailSignIn',
      tags,
      summary: 'Send a six-digit code (exact auth Origin and flow cookie)',
      requestBody: body(
        obj({
          flow_id: str({ pattern: FLOW_ID_PATTERN.source }),
          email: str({ format: 'email', maxLength: 254 }),
        }),
      ),
      responses: {
        202: ok('sent (same answer for every address)', obj({ expires_in: int() })),
        ...pick(400, 403, 413, 429, 503),
      },
    },
  },
  emailConfirm: {
    method: 'POST',
    path: '/management-auth/email/confirm',
    policy: 'origin:auth',
    handlerChecks: ['controlFlowCookie'],
    status: 200,
    operation: {
      operationId: 'confirmManagementEmailSignIn',
      tags,
      summary: 'Check the code and get the redirect to the callback',
      requestBody: body(obj({ flow_id: str(), email: str({ format: 'email' }), code: str({ pattern: '^\\d{6}$' }) })),
      responses: {
        200: ok('redirect_to carries code, state and iss', obj({ redirect_to: str({ format: 'uri' }) })),
        400: error('invalid_code or invalid_request'),
        ...pick(403, 413, 429, 503),
      },
    },
  },
  token: {
    method: 'POST',
    path: '/management-auth/token',
    policy: 'basic:console-client',
    status: 200,
    operation: {
      operationId: 'exchangeManagementToken',
      tags,
      summary: 'Token endpoint: authorization_code (PKCE S256) and refresh_token grants',
      requestBody: body(
        obj(
          {
            grant_type: str({ enum: [...MANAGEMENT_GRANT_TYPES] }),
            code: str(),
            redirect_uri: str(),
            code_verifier: str(),
            refresh_token: str(),
          },
          ['grant_type'],
        ),
        true,
      ),
      responses: {
        200: ok('token set', TOKEN_RESPONSE),
        400: error('invalid_request, invalid_grant or unsupported_grant_type (RFC 6749 5.2)'),
        401: { ...error('invalid_client'), headers: { 'WWW-Authenticate': { schema: str() } } },
        ...pick(413, 503),
      },
    },
  },
  current: {
    method: 'GET',
    path: '/management-auth/current',
    policy: 'bearer:management',
    operation: {
      operationId: 'getCurrentManagementUser',
      tags,
      summary: 'The signed-in developer',
      responses: {
        200: ok(
          'user',
          obj({ user: obj({ id: str({ pattern: '^usr_' }), email: str(), email_verified: { const: true } }) }),
        ),
        401: {
          ...error('unauthorized'),
          headers: { 'WWW-Authenticate': { schema: str({ const: 'Bearer error="invalid_token"' }) } },
        },
        503: ERRORS[503],
      },
    },
  },
  revoke: {
    method: 'POST',
    path: '/management-auth/revoke',
    policy: 'bearer:management',
    status: 200,
    operation: {
      operationId: 'revokeManagementSession',
      tags,
      summary: 'Revoke the caller’s control-plane session',
      responses: { 200: ok('result', ref('Revoked')), 401: ERRORS[401], 503: ERRORS[503] },
    },
  },
  revokeSession: {
    method: 'POST',
    path: '/management-auth/revoke-session',
    policy: 'basic:console-client',
    status: 200,
    operation: {
      operationId: 'revokeManagementSessionById',
      tags,
      summary: 'Revoke a control-plane session by id',
      requestBody: body(obj({ session_id: str({ pattern: '^ses_' }) })),
      responses: { 200: ok('result', ref('Revoked')), ...pick(400, 401, 413, 503) },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
