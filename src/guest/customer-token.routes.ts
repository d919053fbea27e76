import { body, TENANT_PARAM } from '../http/openapi/requests';
import { error, ok, pick } from '../http/openapi/responses';
import { obj, str } from '../http/openapi/schema';
import { GUEST_TOKEN_SET, tokenSetRequired } from '../http/openapi/token-sets';
import type { RouteDeclaration } from '../http/route';

const tags = ['customer-tokens'];
const parameters = [TENANT_PARAM];

/** A customer tenant's discovery, keys, refresh and revocation (contract 6). */
export const CUSTOMER_TOKEN_ROUTES = {
  discovery: {
    method: 'GET',
    path: '/t/:tenantId/.well-known/openid-configuration',
    policy: 'public',
    cache: 'public, max-age=300',
    operation: {
      operationId: 'getTenantDiscovery',
      tags,
      summary: 'Tenant discovery',
      parameters,
      responses: { 200: ok('discovery document', { type: 'object' }), ...pick(404) },
    },
  },
  jwks: {
    method: 'GET',
    path: '/t/:tenantId/.well-known/jwks.json',
    policy: 'public',
    cache: 'public, max-age=300',
    operation: {
      operationId: 'getTenantJwks',
      tags,
      summary: 'Tenant public keys (ES256)',
      parameters,
      responses: { 200: ok('JWK Set', { type: 'object' }), ...pick(404) },
    },
  },
  token: {
    method: 'POST',
    path: '/t/:tenantId/token',
    policy: 'public',
    status: 200,
    operation: {
      operationId: 'refreshCustomerToken',
      tags,
      summary:
        'Rotating refresh for customer sessions. A browser client’s answer also sets its HttpOnly refresh cookie `__Host-svc_refresh_{tenantId}.{clientId}` (SameSite=None; Partitioned by CORS from a web origin, else Lax); a refusal with invalid_grant of the cookie’s token expires it (issue 22 finding 7)',
      parameters,
      requestBody: body(
        obj(
          {
            grant_type: str({ const: 'refresh_token' }),
            refresh_token: str({ description: 'without it, the client’s refresh cookie; the body wins when both' }),
            client_id: str(),
          },
          ['grant_type', 'client_id'],
        ),
        true,
      ),
      responses: {
        200: ok('token set', obj(GUEST_TOKEN_SET, tokenSetRequired([]))),
        400: error('invalid_grant, invalid_request, unsupported_grant_type, invalid_client, unauthorized_client'),
        ...pick(403, 404, 503),
      },
    },
  },
  revoke: {
    method: 'POST',
    path: '/t/:tenantId/revoke',
    policy: 'public',
    status: 200,
    operation: {
      operationId: 'revokeCustomerToken',
      tags,
      summary:
        'RFC 7009 revocation (200 for unknown tokens). Without `token`, the client’s refresh cookie is revoked and expired (issue 22 finding 7)',
      parameters,
      requestBody: body(
        obj(
          {
            token: str({ description: 'without it, the client’s refresh cookie' }),
            token_type_hint: str(),
            client_id: str(),
          },
          ['client_id'],
        ),
        true,
      ),
      responses: { 200: ok('done', obj({})), ...pick(400, 403, 404, 503) },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
