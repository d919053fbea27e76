import { Injectable } from '@nestjs/common';
import { ClientsRepository } from '../directory/clients.repository';
import { TenantsRepository } from '../directory/tenants.repository';
import { AppError } from '../errors/app-error';
import type { ClientEntity } from '../platform/database/entities/client.entity';

/** Spec 4.3 rule 1: an enabled browser or native client of an active customer tenant. */
@Injectable()
export class TenantClients {
  constructor(
    private readonly tenants: TenantsRepository,
    private readonly clients: ClientsRepository,
  ) {}

  async resolve(tenantId: string, clientId: string): Promise<ClientEntity> {
    const { tenantActive, client } = await this.clients.findEnabledOfActiveTenant(tenantId, clientId);
    if (!tenantActive) throw new AppError('tenant_not_found');
    // Unknown, disabled and another tenant's client look the same: 400 invalid_client in a guest
    // body (contract section 2), not the 401 of failed client authentication.
    if (!client || (client.type !== 'browser' && client.type !== 'native'))
      throw new AppError('invalid_client', 'The client is unknown or disabled.', { status: 400 });
    return client;
  }

  async requireActiveTenant(tenantId: string): Promise<void> {
    if (!(await this.tenants.findActiveCustomer(tenantId))) throw new AppError('tenant_not_found');
  }
}
