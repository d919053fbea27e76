import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { LRUCache } from 'lru-cache';
import { BasicStrategy } from 'passport-http';
import type { ClientEntity } from '../platform/database/entities/client.entity';
import { ClientsRepository } from '../directory/clients.repository';
import { clientSecretMatches } from '../directory/client-secret';
import { CONTROL_PLANE_TENANT_ID } from '../directory/tenants.repository';
import { Pseudonymizer } from '../platform/crypto/digests';
import { parseBasicCredentials } from './basic-credentials';

export const CONSOLE_BASIC_STRATEGY = 'console-client-basic';

export interface ConsoleClient {
  readonly clientId: string;
}

/** How long a client row read from PostgreSQL is trusted before it is read again. */
const CLIENT_ROW_TTL_MS = 5_000;

/**
 * HTTP Basic for the confidential console client. The client row is cached for a few seconds
 * (a rotated secret or a re-seed takes effect within CLIENT_ROW_TTL_MS) so the token endpoint's
 * hot path, the refresh grant, costs no database round trip; a database failure on a cache miss
 * propagates as 503. Unknown client and wrong secret do the same digest work and give one answer.
 */
@Injectable()
export class ConsoleClientBasicStrategy extends PassportStrategy(BasicStrategy, CONSOLE_BASIC_STRATEGY) {
  constructor(
    private readonly clients: ClientsRepository,
    private readonly pseudonymizer: Pseudonymizer,
  ) {
    super({ passReqToCallback: true, realm: 'svc-auth' });
  }

  private readonly rows = new LRUCache<string, { row: ClientEntity | null }>({ max: 100, ttl: CLIENT_ROW_TTL_MS });

  async validate(req: Request): Promise<ConsoleClient | false> {
    const credentials = parseBasicCredentials(req.headers.authorization);
    if (!credentials) return false;
    const client = await this.clientRow(credentials.clientId);
    const usable =
      client !== null &&
      client.enabled &&
      client.type === 'confidential' &&
      client.tenantId === CONTROL_PLANE_TENANT_ID;
    const matches = clientSecretMatches(
      this.pseudonymizer,
      credentials.clientId,
      credentials.secret,
      client?.secretDigest ?? '',
    );
    return usable && matches ? { clientId: credentials.clientId } : false;
  }

  private async clientRow(clientId: string): Promise<ClientEntity | null> {
    const cached = this.rows.get(clientId);
    if (cached) return cached.row;
    const row = await this.clients.find(clientId);
    // Only known ids are cached, so random client ids cannot flush the cache.
    if (row) this.rows.set(clientId, { row });
    return row;
  }
}
