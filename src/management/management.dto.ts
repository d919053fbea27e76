import { webOriginsOf } from '../directory/web-origins';
import type { ClientRecord, MembershipRole, TenantRecord } from '../directory/records';

/**
 * Response shapes of the management API (contract section 5), built only by these mappers so an
 * entity field (a client's secret digest or redirect URIs, a tenant's kind) never leaks.
 */
export interface TenantListResponse {
  readonly tenants: ReadonlyArray<{ readonly id: string; readonly name: string; readonly role: MembershipRole }>;
}

export interface TenantResponse {
  readonly tenant: {
    readonly id: string;
    readonly name: string;
    readonly status: TenantRecord['status'];
    readonly created_at: string;
  };
}

export interface ClientListResponse {
  readonly clients: ReadonlyArray<{
    readonly client_id: string;
    readonly name: string;
    readonly type: ClientRecord['type'];
    readonly enabled: boolean;
    readonly scopes: readonly string[];
    /** Origins that may call the tenant API by CORS (contract section 11). */
    readonly web_origins: readonly string[];
  }>;
}

export function toTenantListResponse(
  rows: ReadonlyArray<{ tenant: TenantRecord; role: MembershipRole }>,
): TenantListResponse {
  return { tenants: rows.map(({ tenant, role }) => ({ id: tenant.id, name: tenant.name, role })) };
}

export function toTenantResponse(tenant: TenantRecord): TenantResponse {
  return {
    tenant: { id: tenant.id, name: tenant.name, status: tenant.status, created_at: tenant.createdAt.toISOString() },
  };
}

export function toClientListResponse(clients: readonly ClientRecord[]): ClientListResponse {
  return {
    clients: clients.map((c) => ({
      client_id: c.id,
      name: c.name,
      type: c.type,
      enabled: c.enabled,
      scopes: [...c.scopes],
      web_origins: webOriginsOf(c),
    })),
  };
}
