import {
  ADD_MEMBER,
  ADDED_MEMBER,
  AUDIT_PAGE,
  CLIENT,
  CLIENT_LIST,
  CREATE_CLIENT,
  DEACTIVATED_PLAYER,
  DAILY_STATS,
  ERASED_PLAYER,
  MEMBERS,
  PLAYER_WITH_SESSIONS,
  PLAYERS,
  REMOVED_MEMBER,
  REVOKED_SESSION,
  TENANT,
  TENANT_LIST,
  UPDATE_CLIENT,
} from '../http/openapi/management-schemas';
import { MANAGEMENT_WRITE_SCOPE } from '../directory/control-plane';
import type { MembershipRole } from '../directory/records';
import { body, param } from '../http/openapi/requests';
import { ERRORS, error, ok, pick } from '../http/openapi/responses';
import type { RouteDeclaration } from '../http/route';
import { auditTypeOf, TENANT_ACTIONS, type TenantAction } from './tenant-roles';

const tags = ['management'];
/** A tenant write's refusals; its 403 is no membership (existence not revealed), a role too low, or no tenant:write. */
const WRITE_ERRORS = {
  ...pick(400, 401),
  403: error('forbidden (no membership, a role below the action’s, or a write without the tenant:write scope)'),
  ...pick(413, 503),
};
/** A tenant route's refusals without a body: no bearer, no membership, role or scope, or a dependency down. */
const TENANT_ERRORS = { ...pick(401), 403: WRITE_ERRORS[403], ...pick(503) };
const NO_PLAYER = error('not_found: no such player in this tenant');
/** A tenant and one of its users: a player, or a member. */
const PLAYER_PARAMS = [param('id', 'path'), param('userId', 'path')];

/** A route of one tenant: its action (tenant-roles.ts), which the membership guard checks. */
export interface TenantRouteDeclaration extends RouteDeclaration {
  readonly action: TenantAction;
}

const WHO_MAY: Record<MembershipRole, string> = {
  viewer: 'every member',
  developer: 'developer and up',
  admin: 'admin and up',
  owner: 'owner',
};

/**
 * A tenant route declared from its action: the management bearer's policy, and a summary that ends
 * with who may take the action and, for a write, its scope and audit type, read from the roles
 * table so the document says what the guard does.
 */
function tenantRoute(action: TenantAction, route: Omit<RouteDeclaration, 'policy'>): TenantRouteDeclaration {
  const { role, writes } = TENANT_ACTIONS[action];
  const who = writes ? `${WHO_MAY[role]}; ${MANAGEMENT_WRITE_SCOPE}; audited as ${auditTypeOf(action)}` : WHO_MAY[role];
  return {
    ...route,
    policy: 'bearer:management',
    action,
    operation: { ...route.operation, summary: `${route.operation.summary} (${who})` },
  };
}

/** The management API (contract sections 5 and 15): management bearer tokens only. */
export const MANAGEMENT_ROUTES = {
  tenants: {
    method: 'GET',
    path: '/management/tenants',
    policy: 'bearer:management',
    operation: {
      operationId: 'listTenants',
      tags,
      summary: 'Active tenants of the caller’s current memberships',
      responses: { 200: ok('tenants', TENANT_LIST), 401: ERRORS[401], 503: ERRORS[503] },
    },
  },
  tenant: tenantRoute('tenant.read', {
    method: 'GET',
    path: '/management/tenants/:id',
    operation: {
      operationId: 'getTenant',
      tags,
      summary: 'One tenant (403 does not reveal existence)',
      parameters: [param('id', 'path')],
      responses: { 200: ok('tenant', TENANT), ...pick(401, 403, 503) },
    },
  }),
  clients: tenantRoute('client.list', {
    method: 'GET',
    path: '/management/tenants/:id/clients',
    operation: {
      operationId: 'listTenantClients',
      tags,
      summary: 'Clients of a tenant',
      parameters: [param('id', 'path')],
      responses: { 200: ok('clients', CLIENT_LIST), ...pick(401, 403, 503) },
    },
  }),
  createClient: tenantRoute('client.create', {
    method: 'POST',
    path: '/management/tenants/:id/clients',
    status: 201,
    operation: {
      operationId: 'createTenantClient',
      tags,
      summary: 'Create a browser or native client under the admin CLI’s rules',
      parameters: [param('id', 'path')],
      requestBody: body(CREATE_CLIENT),
      responses: { 201: ok('the new client', CLIENT), ...WRITE_ERRORS },
    },
  }),
  updateClient: tenantRoute('client.update', {
    method: 'PATCH',
    path: '/management/tenants/:id/clients/:clientId',
    operation: {
      operationId: 'updateTenantClient',
      tags,
      summary: 'Change a client',
      parameters: [param('id', 'path'), param('clientId', 'path')],
      requestBody: body(UPDATE_CLIENT),
      responses: {
        200: ok('the client as changed', CLIENT),
        ...WRITE_ERRORS,
        404: error('not_found: no such client in this tenant'),
      },
    },
  }),
  findPlayer: tenantRoute('user.search', {
    method: 'GET',
    path: '/management/tenants/:id/users',
    operation: {
      operationId: 'findTenantPlayer',
      tags,
      summary: 'Find a player by exact user id or exact email address: an address by its keyed digest, never a pattern',
      parameters: [param('id', 'path'), param('q', 'query')],
      responses: {
        200: ok(
          'the player of that id, or the players with an identity of that verified address; none when nobody',
          PLAYERS,
        ),
        400: error('invalid_request: q is neither a user id nor an email address'),
        ...TENANT_ERRORS,
      },
    },
  }),
  player: tenantRoute('user.read', {
    method: 'GET',
    path: '/management/tenants/:id/users/:userId',
    operation: {
      operationId: 'getTenantPlayer',
      tags,
      summary: 'A player and its live sessions',
      parameters: PLAYER_PARAMS,
      responses: { 200: ok('the player', PLAYER_WITH_SESSIONS), ...TENANT_ERRORS, 404: NO_PLAYER },
    },
  }),
  deactivatePlayer: tenantRoute('user.deactivate', {
    method: 'POST',
    path: '/management/tenants/:id/users/:userId/deactivate',
    status: 200,
    operation: {
      operationId: 'deactivateTenantPlayer',
      tags,
      summary: 'Deactivate a player and revoke its sessions at once',
      parameters: PLAYER_PARAMS,
      responses: { 200: ok('the player, deactivated', DEACTIVATED_PLAYER), ...TENANT_ERRORS, 404: NO_PLAYER },
    },
  }),
  erasePlayer: tenantRoute('user.delete', {
    method: 'DELETE',
    path: '/management/tenants/:id/users/:userId',
    operation: {
      operationId: 'eraseTenantPlayer',
      tags,
      summary:
        'Erase a player as `user delete` does: identities, sessions, personal data; the audit trail keeps ids only',
      parameters: PLAYER_PARAMS,
      responses: { 200: ok('erased', ERASED_PLAYER), ...TENANT_ERRORS, 404: NO_PLAYER },
    },
  }),
  revokeSession: tenantRoute('session.revoke', {
    method: 'POST',
    path: '/management/tenants/:id/sessions/:sessionId/revoke',
    status: 200,
    operation: {
      operationId: 'revokeTenantPlayerSession',
      tags,
      summary: 'End one session of a player; its refresh is refused from then on',
      parameters: [param('id', 'path'), param('sessionId', 'path')],
      responses: {
        200: ok('revoked', REVOKED_SESSION),
        ...TENANT_ERRORS,
        404: error('not_found: no such session in this tenant'),
      },
    },
  }),
  audit: tenantRoute('audit.read', {
    method: 'GET',
    path: '/management/tenants/:id/audit',
    operation: {
      operationId: 'getTenantAuditTrail',
      tags,
      summary: 'The tenant’s audit trail, newest first, 50 a page; ids and facts only',
      parameters: [param('id', 'path'), param('type', 'query', false), param('before', 'query', false)],
      responses: { 200: ok('a page of events', AUDIT_PAGE), ...pick(400), ...TENANT_ERRORS },
    },
  }),
  stats: tenantRoute('stats.read', {
    method: 'GET',
    path: '/management/tenants/:id/stats',
    operation: {
      operationId: 'getTenantDailyStats',
      tags,
      summary: 'Guests created, upgrades and sign-ins per UTC day, oldest first',
      parameters: [param('id', 'path'), param('days', 'query', false)],
      responses: {
        200: ok('the last `days` days (1–90, default 30), today included', DAILY_STATS),
        ...pick(400),
        ...TENANT_ERRORS,
      },
    },
  }),
  members: tenantRoute('member.list', {
    method: 'GET',
    path: '/management/tenants/:id/members',
    operation: {
      operationId: 'listTenantMembers',
      tags,
      summary: 'The tenant’s members and their roles',
      parameters: [param('id', 'path')],
      responses: { 200: ok('members', MEMBERS), ...TENANT_ERRORS },
    },
  }),
  addMember: tenantRoute('member.add', {
    method: 'POST',
    path: '/management/tenants/:id/members',
    status: 201,
    operation: {
      operationId: 'addTenantMember',
      tags,
      summary: 'Add a member by email, or change a member’s role; a tenant keeps an owner',
      parameters: [param('id', 'path')],
      requestBody: body(ADD_MEMBER),
      responses: { 201: ok('the member', ADDED_MEMBER), ...WRITE_ERRORS },
    },
  }),
  removeMember: tenantRoute('member.remove', {
    method: 'DELETE',
    path: '/management/tenants/:id/members/:userId',
    operation: {
      operationId: 'removeTenantMember',
      tags,
      summary: 'Remove a member; a tenant keeps an owner',
      parameters: PLAYER_PARAMS,
      responses: {
        200: ok('removed', REMOVED_MEMBER),
        400: error('invalid_request: the tenant’s last owner'),
        ...TENANT_ERRORS,
        404: error('not_found: no such member of this tenant'),
      },
    },
  }),
} as const satisfies Record<string, RouteDeclaration>;
