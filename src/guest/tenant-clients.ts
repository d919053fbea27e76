import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ClientRowCache } from '../directory/client-row-cache';
import { ClientsRepository } from '../directory/clients.repository';
import { TenantsRepository } from '../directory/tenants.repository';
import { AppError } from '../errors/app-error';
import { KnownTenants, ReloadedOnMiss } from './known-tenants';
import type { ClientRecord } from '../directory/records';

/** A tenant's enabled browser and native client ids, and whether the tenant was active, as last loaded. */
interface TenantClientIds {
  readonly tenantActive: boolean;
  readonly ids: ReadonlySet<string>;
}

const NO_CLIENTS: TenantClientIds = { tenantActive: false, ids: new Set() };

/** Spec 4.3 rule 1: an enabled browser or native client of an active customer tenant. */
@Injectable()
export class TenantClients {
  /**
   * Only clients that resolved are kept, so random ids cannot flush the cache; guest creation
   * trusts a row for CLIENT_CACHE_TTL_MS before reading it again, as for console client rows.
   */
  private readonly recent: ClientRowCache<ClientRecord>;
  /** Unknown tenant ids are answered without a PostgreSQL read of their own (issue 22, point 6). */
  private readonly known: KnownTenants;
  /**
   * Per tenant, its client ids (issue 22, point 6): random client ids of a real tenant, on the
   * unbudgeted refresh, are refused from memory with at most one reload per tenant every
   * RELOAD_ON_MISS_MIN_MS. Only tenants that passed `known` get an entry, so the map holds at most
   * one per tenant that was ever active while this instance ran.
   */
  private readonly clientIds = new Map<string, ReloadedOnMiss<TenantClientIds>>();

  constructor(
    private readonly tenants: TenantsRepository,
    private readonly clients: ClientsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.recent = new ClientRowCache(config, 1_000);
    this.known = new KnownTenants(() => this.tenants.activeCustomerIds());
  }

  /** False only for a tenant that is not an active customer tenant; true means "read the row". */
  mayBeActiveTenant(tenantId: string): Promise<boolean> {
    return this.known.mayBeActive(tenantId);
  }

  /** The client as PostgreSQL has it now: a disabled client or an inactive tenant is refused at once. */
  async resolve(tenantId: string, clientId: string): Promise<ClientRecord> {
    if (!(await this.known.mayBeActive(tenantId))) throw new AppError('tenant_not_found');
    // A listed id may be stale, so its row is still read afresh below; an unlisted one is exact.
    const listed = await this.clientIdsOf(tenantId).find((c) => c.tenantActive && c.ids.has(clientId));
    const readAt = this.recent.now();
    const { tenantActive, client } =
      listed.tenantActive && listed.ids.has(clientId)
        ? await this.clients.findEnabledOfActiveTenant(tenantId, clientId)
        : { tenantActive: listed.tenantActive, client: null };
    if (tenantActive && client && isPublicClient(client)) {
      this.recent.set(key(tenantId, clientId), client, readAt);
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
  async resolveRecent(tenantId: string, clientId: string): Promise<ClientRecord> {
    return this.recent.get(key(tenantId, clientId)) ?? this.resolve(tenantId, clientId);
  }

  private clientIdsOf(tenantId: string): ReloadedOnMiss<TenantClientIds> {
    let ids = this.clientIds.get(tenantId);
    if (!ids) {
      ids = new ReloadedOnMiss(() => this.loadClientIds(tenantId), NO_CLIENTS);
      this.clientIds.set(tenantId, ids);
    }
    return ids;
  }

  private async loadClientIds(tenantId: string): Promise<TenantClientIds> {
    const [tenant, clients] = await Promise.all([
      this.tenants.findActiveCustomer(tenantId),
      this.clients.listOf(tenantId),
    ]);
    return {
      tenantActive: tenant !== null,
      ids: new Set(clients.filter((c) => c.enabled && isPublicClient(c)).map((c) => c.id)),
    };
  }

  async requireActiveTenant(tenantId: string): Promise<void> {
    if (!(await this.known.mayBeActive(tenantId)) || !(await this.tenants.findActiveCustomer(tenantId)))
      throw new AppError('tenant_not_found');
  }
}

const key = (tenantId: string, clientId: string): string => `${tenantId}\0${clientId}`;

/** Spec 4.3 rule 1: the guest routes serve browser and native clients only. */
const isPublicClient = (client: Pick<ClientRecord, 'type'>): boolean =>
  client.type === 'browser' || client.type === 'native';
