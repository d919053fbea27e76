import { webOriginsOf } from '../directory/web-origins';
import type { ClientEntity } from '../platform/database/entities/client.entity';
import type { MembershipRole } from '../platform/database/entities/membership.entity';
import type { TenantEntity } from '../platform/database/entities/tenant.entity';

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
    readonly status: TenantEntity['status'];
    readonly created_at: string;
  };
}

export interface ClientListResponse {
  readonly clients: ReadonlyArray<{
    readonly client_id: string;
    readonly name: string;
    readonly type: ClientEntity['type'];
    readonly enabled: boolean;
    readonly scopes: readonly string[];
    /** Origins that may call the tenant API by CORS (contract section 11). */
    readonly web_origins: readonly string[];
  }>;
}

export function toTenantListResponse(
  rows: ReadonlyArray<{ tenant: TenantEntity; role: MembershipRole }>,
): TenantListResponse {
  return { tenants: rows.map(({ tenant, role }) => ({ id: tenant.id, name: tenant.name, role })) };
}

export function toTenantResponse(tenant: TenantEntity): TenantResponse {
  return {
    tenant: { id: tenant.id, name: tenant.name, status: tenant.status, created_at: tenant.createdAt.toISOString() },
  };
}

export function toClientListResponse(clients: readonly ClientEntity[]): ClientListResponse {
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
