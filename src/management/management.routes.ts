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
import { body, param } from '../http/openapi/requests';
import { ERRORS, error, ok, pick } from '../http/openapi/responses';
import type { RouteDeclaration } from '../http/route';

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

/**
 * The management API (contract sections 5 and 15): management bearer tokens only; tenant routes
 * also name their action for the membership guard (tenant-roles.ts).
 */
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
  tenant: {
    method: 'GET',
    path: '/management/tenants/:id',
    policy: 'bearer:management',
    operation: {
      operationId: 'getTenant',
      tags,
      summary: 'One tenant (membership required; 403 does not reveal existence)',
      parameters: [param('id', 'path')],
      responses: { 200: ok('tenant', TENANT), ...pick(401, 403, 503) },
    },
  },
  clients: {
    method: 'GET',
    path: '/management/tenants/:id/clients',
    policy: 'bearer:management',
    operation: {
      operationId: 'listTenantClients',
      tags,
      summary: 'Clients of a tenant (membership required)',
      parameters: [param('id', 'path')],
      responses: { 200: ok('clients', CLIENT_LIST), ...pick(401, 403, 503) },
    },
  },
  createClient: {
    method: 'POST',
    path: '/management/tenants/:id/clients',
    policy: 'bearer:management',
    status: 201,
    operation: {
      operationId: 'createTenantClient',
      tags,
      summary:
        'Create a browser or native client (admin or owner; tenant:write) under the admin CLI’s rules; audited as console.client.create',
      parameters: [param('id', 'path')],
      requestBody: body(CREATE_CLIENT),
      responses: { 201: ok('the new client', CLIENT), ...WRITE_ERRORS },
    },
  },
  updateClient: {
    method: 'PATCH',
    path: '/management/tenants/:id/clients/:clientId',
    policy: 'bearer:management',
    operation: {
      operationId: 'updateTenantClient',
      tags,
      summary: 'Change a client (admin or owner; tenant:write); audited as console.client.update',
      parameters: [param('id', 'path'), param('clientId', 'path')],
      requestBody: body(UPDATE_CLIENT),
      responses: {
        200: ok('the client as changed', CLIENT),
        ...WRITE_ERRORS,
        404: error('not_found: no such client in this tenant'),
      },
    },
  },
  findPlayer: {
    method: 'GET',
    path: '/management/tenants/:id/users',
    policy: 'bearer:management',
    operation: {
      operationId: 'findTenantPlayer',
      tags,
      summary:
        'Find a player by exact user id or exact email address (developer and up): an address by its keyed digest, never a pattern',
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
  },
  player: {
    method: 'GET',
    path: '/management/tenants/:id/users/:userId',
    policy: 'bearer:management',
    operation: {
      operationId: 'getTenantPlayer',
      tags,
      summary: 'A player and its live sessions (developer and up)',
      parameters: PLAYER_PARAMS,
      responses: { 200: ok('the player', PLAYER_WITH_SESSIONS), ...TENANT_ERRORS, 404: NO_PLAYER },
    },
  },
  deactivatePlayer: {
    method: 'POST',
    path: '/management/tenants/:id/users/:userId/deactivate',
    policy: 'bearer:management',
    status: 200,
    operation: {
      operationId: 'deactivateTenantPlayer',
      tags,
      summary:
        'Deactivate a player and revoke its sessions at once (admin and up; tenant:write); audited as console.user.deactivate',
      parameters: PLAYER_PARAMS,
      responses: { 200: ok('the player, deactivated', DEACTIVATED_PLAYER), ...TENANT_ERRORS, 404: NO_PLAYER },
    },
  },
  erasePlayer: {
    method: 'DELETE',
    path: '/management/tenants/:id/users/:userId',
    policy: 'bearer:management',
    operation: {
      operationId: 'eraseTenantPlayer',
      tags,
      summary:
        'Erase a player as `user delete` does: identities, sessions, personal data; the audit trail keeps ids only (admin and up; tenant:write); audited as console.user.delete',
      parameters: PLAYER_PARAMS,
      responses: { 200: ok('erased', ERASED_PLAYER), ...TENANT_ERRORS, 404: NO_PLAYER },
    },
  },
  revokeSession: {
    method: 'POST',
    path: '/management/tenants/:id/sessions/:sessionId/revoke',
    policy: 'bearer:management',
    status: 200,
    operation: {
      operationId: 'revokeTenantPlayerSession',
      tags,
      summary:
        'End one session of a player; its refresh is refused from then on (admin and up; tenant:write); audited as console.session.revoke',
      parameters: [param('id', 'path'), param('sessionId', 'path')],
      responses: {
        200: ok('revoked', REVOKED_SESSION),
        ...TENANT_ERRORS,
        404: error('not_found: no such session in this tenant'),
      },
    },
  },
  audit: {
    method: 'GET',
    path: '/management/tenants/:id/audit',
    policy: 'bearer:management',
    operation: {
      operationId: 'getTenantAuditTrail',
      tags,
      summary: 'The tenant’s audit trail, newest first, 50 a page (every member); ids and facts only',
      parameters: [param('id', 'path'), param('type', 'query', false), param('before', 'query', false)],
      responses: { 200: ok('a page of events', AUDIT_PAGE), ...pick(400), ...TENANT_ERRORS },
    },
  },
  stats: {
    method: 'GET',
    path: '/management/tenants/:id/stats',
    policy: 'bearer:management',
    operation: {
      operationId: 'getTenantDailyStats',
      tags,
      summary: 'Guests created, upgrades and sign-ins per UTC day, oldest first (every member)',
      parameters: [param('id', 'path'), param('days', 'query', false)],
      responses: {
        200: ok('the last `days` days (1–90, default 30), today included', DAILY_STATS),
        ...pick(400),
        ...TENANT_ERRORS,
      },
    },
  },
  members: {
    method: 'GET',
    path: '/management/tenants/:id/members',
    policy: 'bearer:management',
    operation: {
      operationId: 'listTenantMembers',
      tags,
      summary: 'The tenant’s members and their roles (every member)',
      parameters: [param('id', 'path')],
      responses: { 200: ok('members', MEMBERS), ...TENANT_ERRORS },
    },
  },
  addMember: {
    method: 'POST',
    path: '/management/tenants/:id/members',
    policy: 'bearer:management',
    status: 201,
    operation: {
      operationId: 'addTenantMember',
      tags,
      summary:
        'Add a member by email, or change a member’s role (owner; tenant:write); a tenant keeps an owner; audited as console.member.add',
      parameters: [param('id', 'path')],
      requestBody: body(ADD_MEMBER),
      responses: { 201: ok('the member', ADDED_MEMBER), ...WRITE_ERRORS },
    },
  },
  removeMember: {
    method: 'DELETE',
    path: '/management/tenants/:id/members/:userId',
    policy: 'bearer:management',
    operation: {
      operationId: 'removeTenantMember',
      tags,
      summary: 'Remove a member (owner; tenant:write); a tenant keeps an owner; audited as console.member.remove',
      parameters: PLAYER_PARAMS,
      responses: {
        200: ok('removed', REMOVED_MEMBER),
        400: error('invalid_request: the tenant’s last owner'),
        ...TENANT_ERRORS,
        404: error('not_found: no such member of this tenant'),
      },
    },
  },
} as const satisfies Record<string, RouteDeclaration>;
