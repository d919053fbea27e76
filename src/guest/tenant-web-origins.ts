import { Inject, Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ClientsRepository } from '../directory/clients.repository';
import { ClientRowCache } from '../directory/client-row-cache';
import { webOriginsOf } from '../directory/web-origins';
import { ReloadedOnMiss } from './known-tenants';
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
 * 11), read in one query and held in memory so CORS costs no database round trip on the hot path.
 * - A hit is trusted for CLIENT_CACHE_TTL_MS, as client rows are: a disabled client or a
 *   deactivated tenant stops answering CORS within that time.
 * - A miss is exact (ReloadedOnMiss): it waits for a read that started after it was asked, so an
 *   origin registered a moment ago (a client created in the console, contract 15, or by the CLI in
 *   another process or on another instance) works at once. Random origins cost at most one read
 *   per tenant every RELOAD_ON_MISS_MIN_MS, shared by every miss.
 * Only active tenants get an entry, so random tenant ids cannot flush the map, and those ids are
 * answered from the known-tenant set without a query of their own. A database failure on a miss
 * propagates (503).
 */
@Injectable()
export class TenantWebOrigins {
  /** Each tenant's loader, which keeps the reloads of its misses apart in time. */
  private readonly tenants = new LRUCache<string, ReloadedOnMiss<TenantOrigins>>({ max: 1_000 });
  /** Each tenant's last load, trusted for CLIENT_CACHE_TTL_MS. */
  private readonly recent: ClientRowCache<TenantOrigins>;

  constructor(
    private readonly clients: ClientsRepository,
    private readonly tenantClients: TenantClients,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.recent = new ClientRowCache(config, 1_000);
  }

  /** Whether `origin` is a web origin of the named enabled browser client of the active tenant. */
  async isWebOriginOfClient(tenantId: string, clientId: string, origin: string): Promise<boolean> {
    return this.holds(tenantId, (o) => o.byClient.get(clientId)?.has(origin) ?? false);
  }

  /** Whether `origin` is a web origin of any enabled browser client of the active tenant. */
  async isWebOriginOfTenant(tenantId: string, origin: string): Promise<boolean> {
    return this.holds(tenantId, (o) => o.any.has(origin));
  }

  private async holds(tenantId: string, has: (origins: TenantOrigins) => boolean): Promise<boolean> {
    const recent = this.recent.get(tenantId);
    if (recent !== undefined && has(recent)) return true;
    let origins = this.tenants.get(tenantId);
    if (!origins) {
      // An unknown tenant costs no query of its own (issue 22, point 6): see KnownTenants.
      if (!(await this.tenantClients.mayBeActiveTenant(tenantId))) return false;
      origins = new ReloadedOnMiss(() => this.load(tenantId), NONE);
      this.tenants.set(tenantId, origins);
    }
    // Stale or not there: the answer of a read that starts after the question.
    return has(await origins.find(() => false));
  }

  private async load(tenantId: string): Promise<TenantOrigins> {
    const readAt = this.recent.now();
    const clients = await this.clients.browserClientsOfActiveTenant(tenantId);
    const byClient = new Map((clients ?? []).map((c) => [c.id, new Set(webOriginsOf(c))] as const));
    const origins = { byClient, any: new Set([...byClient.values()].flatMap((s) => [...s])) };
    this.recent.set(tenantId, origins, readAt);
    return origins;
  }
}
