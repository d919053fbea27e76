import {
  CLIENT,
  CLIENT_LIST,
  CREATE_CLIENT,
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
} as const satisfies Record<string, RouteDeclaration>;
