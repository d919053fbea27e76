import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ClientsRepository } from '../directory/clients.repository';
import { TenantsRepository } from '../directory/tenants.repository';
import { AppError } from '../errors/app-error';
import type { ClientEntity } from '../platform/database/entities/client.entity';
import { KnownTenants } from './known-tenants';

/** How long guest creation trusts a client row before reading it again (as for console client rows). */
const RECENT_CLIENT_TTL_MS = 5_000;

/** Spec 4.3 rule 1: an enabled browser or native client of an active customer tenant. */
@Injectable()
export class TenantClients {
  /** Only clients that resolved are kept, so random ids cannot flush the cache. */
  private readonly recent = new LRUCache<string, ClientEntity>({ max: 1_000, ttl: RECENT_CLIENT_TTL_MS });
  /** Unknown tenant ids are answered without a PostgreSQL read of their own (issue 22, point 6). */
  private readonly known: KnownTenants;

  constructor(
    private readonly tenants: TenantsRepository,
    private readonly clients: ClientsRepository,
  ) {
    this.known = new KnownTenants(() => this.tenants.activeCustomerIds());
  }

  /** False only for a tenant that is not an active customer tenant; true means "read the row". */
  mayBeActiveTenant(tenantId: string): Promise<boolean> {
    return this.known.mayBeActive(tenantId);
  }

  /** The client as PostgreSQL has it now: a disabled client or an inactive tenant is refused at once. */
  async resolve(tenantId: string, clientId: string): Promise<ClientEntity> {
    if (!(await this.known.mayBeActive(tenantId))) throw new AppError('tenant_not_found');
    const { tenantActive, client } = await this.clients.findEnabledOfActiveTenant(tenantId, clientId);
    if (tenantActive && client && (client.type === 'browser' || client.type === 'native')) {
      this.recent.set(key(tenantId, clientId), client);
      return client;
    }
    this.recent.delete(key(tenantId, clientId));
    if (!tenantActive) throw new AppError('tenant_not_found');
    // Unknown, disabled and another tenant's client look the same: 400 invalid_client in a guest
    // body (contract section 2), not the 401 of failed client authentication.
    throw new AppError('invalid_client', 'The client is unknown or disabled.', { status: 400 });
  }

  /**
   * The client as read within the last few seconds, for a caller whose write re-checks the row it
   * was given (guest creation's insert does) and calls `resolve` when the row has changed. It saves
   * the hot path a database round trip without letting a disabled client through.
   */
  async resolveRecent(tenantId: string, clientId: string): Promise<ClientEntity> {
    return this.recent.get(key(tenantId, clientId)) ?? this.resolve(tenantId, clientId);
  }

  async requireActiveTenant(tenantId: string): Promise<void> {
    if (!(await this.known.mayBeActive(tenantId)) || !(await this.tenants.findActiveCustomer(tenantId)))
      throw new AppError('tenant_not_found');
  }
}

const key = (tenantId: string, clientId: string): string => `${tenantId}\0${clientId}`;
