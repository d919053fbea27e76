import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { ClientRowCache } from '../directory/client-row-cache';
import { ClientsRepository } from '../directory/clients.repository';
import type { ClientRecord } from '../directory/records';

/**
 * The console client's row for the token endpoint's Basic check and the authorize endpoint,
 * cached for a few seconds so neither pays a database round trip per request: a rotated secret,
 * a disabled client or a re-seed takes effect within CLIENT_CACHE_TTL_MS. Only known ids are
 * cached, so random client ids cannot flush the cache; a database failure on a miss propagates
 * (503).
 */
@Injectable()
export class ConsoleClientRows {
  private readonly rows: ClientRowCache<ClientRecord>;

  constructor(
    private readonly clients: ClientsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.rows = new ClientRowCache(config, 100);
  }

  async find(clientId: string): Promise<ClientRecord | null> {
    const cached = this.rows.get(clientId);
    if (cached) return cached;
    // Stamped when the read starts: a row is trusted for the lifetime from the moment it may have
    // been read, however long the read took.
    const readAt = this.rows.now();
    const row = await this.clients.find(clientId);
    if (row) this.rows.set(clientId, row, readAt);
    return row;
  }
}
