import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
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
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'consoleClientId'>,
  ) {}

  async verify(authorization: string | undefined): Promise<ConsoleClient | null> {
    const credentials = parseBasicCredentials(authorization);
    if (!credentials) return null;
    // Only the configured console client authenticates here, as at authorize. Any other id is
    // refused without a lookup: only existing rows are cached, so made-up ids would each cost a
    // PostgreSQL read on routes without a network budget.
    const client =
      credentials.clientId === this.config.consoleClientId ? await this.clients.find(credentials.clientId) : null;
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
