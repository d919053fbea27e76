import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ClientsRepository } from '../directory/clients.repository';
import { webOriginsOf } from '../directory/web-origins';
import { TenantClients } from './tenant-clients';

interface TenantOrigins {
  /** Web origins of each enabled browser client. */
  readonly byClient: ReadonlyMap<string, ReadonlySet<string>>;
  /** The union: a preflight names no client (contract section 11). */
  readonly any: ReadonlySet<string>;
}

const NONE: TenantOrigins = { byClient: new Map(), any: new Set() };

/**
 * The web origins of the enabled browser clients of an active customer tenant (contract section
 * 11), read in one query and cached for a few seconds so CORS costs no database round trip on the
 * hot path; a disabled client or a deactivated tenant stops answering CORS within
 * CLIENT_CACHE_TTL_MS, as for client rows. Only active tenants are cached, so random tenant ids cannot flush the
 * cache, and those ids are answered from the known-tenant set without a query of their own. A
 * database failure on a miss propagates (503).
 */
@Injectable()
export class TenantWebOrigins {
  private readonly tenants: LRUCache<string, TenantOrigins>;

  constructor(
    private readonly clients: ClientsRepository,
    private readonly tenantClients: TenantClients,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.tenants = new LRUCache({ max: 1_000, ttl: config.clientCacheTtlMs });
  }

  /** Whether `origin` is a web origin of the named enabled browser client of the active tenant. */
  async isWebOriginOfClient(tenantId: string, clientId: string, origin: string): Promise<boolean> {
    return (await this.of(tenantId)).byClient.get(clientId)?.has(origin) ?? false;
  }

  /** Whether `origin` is a web origin of any enabled browser client of the active tenant. */
  async isWebOriginOfTenant(tenantId: string, origin: string): Promise<boolean> {
    return (await this.of(tenantId)).any.has(origin);
  }

  private async of(tenantId: string): Promise<TenantOrigins> {
    const cached = this.tenants.get(tenantId);
    if (cached) return cached;
    // An unknown tenant costs no query of its own (issue 22, point 6): see KnownTenants.
    if (!(await this.tenantClients.mayBeActiveTenant(tenantId))) return NONE;
    const clients = await this.clients.browserClientsOfActiveTenant(tenantId);
    if (clients === null) return NONE;
    const byClient = new Map(clients.map((c) => [c.id, new Set(webOriginsOf(c))] as const));
    const origins: TenantOrigins = { byClient, any: new Set([...byClient.values()].flatMap((s) => [...s])) };
    this.tenants.set(tenantId, origins);
    return origins;
  }
}
