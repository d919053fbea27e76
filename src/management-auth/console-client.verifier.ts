import { Injectable } from '@nestjs/common';
import { clientSecretMatches } from '../directory/client-secret';
import { Pseudonymizer } from '../platform/crypto/digests';
import { parseBasicCredentials } from './basic-credentials';
import { ConsoleClientRows } from './console-client-rows';
import { CONTROL_PLANE_TENANT_ID } from '../directory/control-plane';

export interface ConsoleClient {
  readonly clientId: string;
}

/**
 * The one check of the confidential console client's HTTP Basic credentials: the Authorization
 * header parsed once, strictly (basic-credentials.ts), then the secret against the client's cached
 * row (ConsoleClientRows), so the token endpoint's hot path, the refresh grant, costs no database
 * round trip. Unknown client and wrong secret do the same digest work and give one answer: null.
 */
@Injectable()
export class ConsoleClientVerifier {
  constructor(
    private readonly clients: ConsoleClientRows,
    private readonly pseudonymizer: Pseudonymizer,
  ) {}

  async verify(authorization: string | undefined): Promise<ConsoleClient | null> {
    const credentials = parseBasicCredentials(authorization);
    if (!credentials) return null;
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
    return usable && matches ? { clientId: credentials.clientId } : null;
  }
}
