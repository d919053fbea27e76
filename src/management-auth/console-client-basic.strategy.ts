import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { BasicStrategy } from 'passport-http';
import { clientSecretMatches } from '../directory/client-secret';
import { CONTROL_PLANE_TENANT_ID } from '../directory/tenants.repository';
import { Pseudonymizer } from '../platform/crypto/digests';
import { parseBasicCredentials } from './basic-credentials';
import { ConsoleClientRows } from './console-client-rows';

export const CONSOLE_BASIC_STRATEGY = 'console-client-basic';

export interface ConsoleClient {
  readonly clientId: string;
}

/**
 * HTTP Basic for the confidential console client, against its cached row (ConsoleClientRows), so
 * the token endpoint's hot path, the refresh grant, costs no database round trip. Unknown client
 * and wrong secret do the same digest work and give one answer.
 */
@Injectable()
export class ConsoleClientBasicStrategy extends PassportStrategy(BasicStrategy, CONSOLE_BASIC_STRATEGY) {
  constructor(
    private readonly clients: ConsoleClientRows,
    private readonly pseudonymizer: Pseudonymizer,
  ) {
    super({ passReqToCallback: true, realm: 'svc-auth' });
  }

  async validate(req: Request): Promise<ConsoleClient | false> {
    const credentials = parseBasicCredentials(req.headers.authorization);
    if (!credentials) return false;
    const client = await this.clients.find(credentials.clientId);
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
}
