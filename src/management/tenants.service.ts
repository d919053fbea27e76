import { Injectable } from '@nestjs/common';
import { ClientsRepository } from '../directory/clients.repository';
import { MembershipsRepository } from '../directory/memberships.repository';
import { TenantsRepository } from '../directory/tenants.repository';
import {
  toClientListResponse,
  toTenantListResponse,
  type ClientListResponse,
  type TenantListResponse,
} from './management.dto';

/** Read-only views of the tenants a developer belongs to (contract section 5). */
@Injectable()
export class TenantsService {
  constructor(
    private readonly memberships: MembershipsRepository,
    private readonly tenants: TenantsRepository,
    private readonly clients: ClientsRepository,
  ) {}

  /** Active customer tenants with a current membership of the user, by name. */
  async listForUser(userId: string): Promise<TenantListResponse> {
    const memberships = await this.memberships.listOfUser(userId);
    const roleOf = new Map(memberships.map((m) => [m.tenantId, m.role]));
    const tenants = await this.tenants.findActiveByIds([...roleOf.keys()]);
    return toTenantListResponse(
      tenants.flatMap((tenant) => {
        const role = roleOf.get(tenant.id);
        return role ? [{ tenant, role }] : [];
      }),
    );
  }

  async clientsOf(tenantId: string): Promise<ClientListResponse> {
    return toClientListResponse(await this.clients.listOf(tenantId));
  }
}
