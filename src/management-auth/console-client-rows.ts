import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ClientsRepository } from '../directory/clients.repository';
import type { ClientEntity } from '../platform/database/entities/client.entity';

/** How long a console client row read from PostgreSQL is trusted before it is read again. */
const CLIENT_ROW_TTL_MS = 5_000;

/**
 * The console client's row for the token endpoint's Basic check and the authorize endpoint,
 * cached for a few seconds so neither pays a database round trip per request: a rotated secret,
 * a disabled client or a re-seed takes effect within CLIENT_ROW_TTL_MS. Only known ids are
 * cached, so random client ids cannot flush the cache; a database failure on a miss propagates
 * (503).
 */
@Injectable()
export class ConsoleClientRows {
  private readonly rows = new LRUCache<string, { row: ClientEntity }>({ max: 100, ttl: CLIENT_ROW_TTL_MS });

  constructor(private readonly clients: ClientsRepository) {}

  async find(clientId: string): Promise<ClientEntity | null> {
    const cached = this.rows.get(clientId);
    if (cached) return cached.row;
    const row = await this.clients.find(clientId);
    if (row) this.rows.set(clientId, { row });
    return row;
  }
}
