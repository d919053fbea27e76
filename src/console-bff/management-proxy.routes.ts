import * as api from '../http/openapi/management-schemas';
import type { OpenApiOperation } from '../http/openapi/operation';
import { body, param } from '../http/openapi/requests';
import { error, ok, pick } from '../http/openapi/responses';
import type { Schema } from '../http/openapi/schema';
import type { RouteDeclaration } from '../http/route';

const tags = ['console'];

/** A proxied route and the query parameters it passes on (contract 15); any other is dropped. */
export interface ProxiedRoute extends RouteDeclaration {
  readonly query: readonly string[];
}

/**
 * One proxied route: its BFF path is `/api` + the management path (contracts 4 and 15), every
 * answer is the API's as it is, and its refusals are the API's plus the BFF's own: 401 without a
 * console session, 403 for a state-changing call without the exact console Origin, 404 for a path
 * parameter no route could name.
 */
function proxied(
  method: RouteDeclaration['method'],
  managementPath: string,
  operationId: string,
  success: Readonly<Record<number, Schema>>,
  extra: { query?: readonly string[]; requestBody?: Schema } = {},
): ProxiedRoute {
  const path = `/api${managementPath}`;
  const parameters = [
    ...[...path.matchAll(/:([A-Za-z]+)/g)].map((m) => param(m[1] as string, 'path')),
    ...(extra.query ?? []).map((name) => param(name, 'query', false)),
  ];
  const writes = method !== 'GET';
  const operation: OpenApiOperation = {
    operationId,
    tags,
    summary: `Proxy of ${method} ${managementPath.replace(/:([A-Za-z]+)/g, '{$1}')}${writes ? ' (exact console Origin)' : ''}`,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(extra.requestBody ? { requestBody: extra.requestBody } : {}),
    responses: {
      ...Object.fromEntries(Object.entries(success).map(([status, schema]) => [status, ok('as upstream', schema)])),
      ...(writes || extra.query ? pick(400) : {}),
      ...pick(401),
      403: error(
        writes
          ? 'forbidden: not the exact console Origin, or the API’s answer (membership, role, tenant:write)'
          : 'forbidden: the API’s answer (no membership, or a role below the action’s)',
      ),
      404: error('not_found: a path parameter no route names (contract 4), or the API’s answer'),
      ...(extra.requestBody ? pick(413) : {}),
      ...pick(503),
    },
  };
  // No status: the handler answers with the API's own.
  return { method, path, policy: 'console-session', operation, query: extra.query ?? [] };
}

/**
 * Exactly the management routes the console uses (contract 4, 15), each proxied to the same path
 * on the API with the session's bearer. Nothing else under /api/management/ has a route.
 */
export const PROXY_ROUTES = {
  tenants: proxied('GET', '/management/tenants', 'proxyListTenants', { 200: api.TENANT_LIST }),
  tenant: proxied('GET', '/management/tenants/:id', 'proxyGetTenant', { 200: api.TENANT }),
  clients: proxied('GET', '/management/tenants/:id/clients', 'proxyListTenantClients', { 200: api.CLIENT_LIST }),
  createClient: proxied(
    'POST',
    '/management/tenants/:id/clients',
    'proxyCreateTenantClient',
    { 201: api.CLIENT },
    {
      requestBody: body(api.CREATE_CLIENT),
    },
  ),
  updateClient: proxied(
    'PATCH',
    '/management/tenants/:id/clients/:clientId',
    'proxyUpdateTenantClient',
    {
      200: api.CLIENT,
    },
    { requestBody: body(api.UPDATE_CLIENT) },
  ),
  findPlayer: proxied(
    'GET',
    '/management/tenants/:id/users',
    'proxyFindTenantPlayer',
    { 200: api.PLAYERS },
    {
      query: ['q'],
    },
  ),
  player: proxied('GET', '/management/tenants/:id/users/:userId', 'proxyGetTenantPlayer', {
    200: api.PLAYER_WITH_SESSIONS,
  }),
  deactivatePlayer: proxied('POST', '/management/tenants/:id/users/:userId/deactivate', 'proxyDeactivateTenantPlayer', {
    200: api.DEACTIVATED_PLAYER,
  }),
  erasePlayer: proxied('DELETE', '/management/tenants/:id/users/:userId', 'proxyEraseTenantPlayer', {
    200: api.ERASED_PLAYER,
  }),
  revokeSession: proxied(
    'POST',
    '/management/tenants/:id/sessions/:sessionId/revoke',
    'proxyRevokeTenantPlayerSession',
    { 200: api.REVOKED_SESSION },
  ),
  audit: proxied(
    'GET',
    '/management/tenants/:id/audit',
    'proxyGetTenantAuditTrail',
    { 200: api.AUDIT_PAGE },
    {
      query: ['type', 'before'],
    },
  ),
  stats: proxied(
    'GET',
    '/management/tenants/:id/stats',
    'proxyGetTenantDailyStats',
    { 200: api.DAILY_STATS },
    {
      query: ['days'],
    },
  ),
  members: proxied('GET', '/management/tenants/:id/members', 'proxyListTenantMembers', { 200: api.MEMBERS }),
  addMember: proxied(
    'POST',
    '/management/tenants/:id/members',
    'proxyAddTenantMember',
    { 201: api.ADDED_MEMBER },
    {
      requestBody: body(api.ADD_MEMBER),
    },
  ),
  removeMember: proxied('DELETE', '/management/tenants/:id/members/:userId', 'proxyRemoveTenantMember', {
    200: api.REMOVED_MEMBER,
  }),
} as const satisfies Record<string, RouteDeclaration>;
