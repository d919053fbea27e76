import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type ConsoleClientSettings } from '../config/config';
import { Pseudonymizer } from '../platform/crypto/digests';
import { ClientsRepository } from './clients.repository';
import { clientSecretDigest, clientSecretMatches } from './client-secret';
import { TenantsRepository } from './tenants.repository';
import {
  CONSOLE_CLIENT_NAME,
  consoleCallbackUri,
  CONTROL_PLANE_KIND,
  CONTROL_PLANE_TENANT_ID,
  CONTROL_PLANE_TENANT_NAME,
  MANAGEMENT_SCOPES,
} from './control-plane';

/**
 * The control-plane seed (spec 1.6): the realm and the console client row with a hashed secret
 * and its exact callback URI. `seed` writes it (idempotent; re-running with a new secret rotates
 * it, and a comma-separated CONSOLE_CLIENT_SECRET stores each for an overlap); `verify` runs at start-up and refuses to start on a missing or conflicting seed.
 */
@Injectable()
export class ControlPlaneSeedService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: ConsoleClientSettings,
    private readonly tenants: TenantsRepository,
    private readonly clients: ClientsRepository,
    private readonly pseudonymizer: Pseudonymizer,
  ) {}

  async seed(): Promise<{ realm: string; client_id: string; redirect_uri: string }> {
    if (!(await this.tenants.find(CONTROL_PLANE_TENANT_ID))) {
      await this.tenants.create(CONTROL_PLANE_TENANT_ID, CONTROL_PLANE_TENANT_NAME, CONTROL_PLANE_KIND);
    }
    const existing = await this.clients.find(this.config.consoleClientId);
    if (existing && existing.tenantId !== CONTROL_PLANE_TENANT_ID) {
      throw new Error(`client ${this.config.consoleClientId} exists in another tenant`);
    }
    await this.clients.upsert({
      id: this.config.consoleClientId,
      tenantId: CONTROL_PLANE_TENANT_ID,
      name: CONSOLE_CLIENT_NAME,
      type: 'confidential',
      enabled: true,
      scopes: [...MANAGEMENT_SCOPES],
      redirectUris: [consoleCallbackUri(this.config)],
      // Every listed secret is accepted during a rotation's overlap (docs/operations.md).
      secretDigest: this.config.consoleClientSecrets
        .map((secret) => clientSecretDigest(this.pseudonymizer, this.config.consoleClientId, secret))
        .join(' '),
    });
    return {
      realm: CONTROL_PLANE_TENANT_ID,
      client_id: this.config.consoleClientId,
      redirect_uri: consoleCallbackUri(this.config),
    };
  }

  /** Returns the problems found; empty means the seed matches the configuration. */
  async verify(): Promise<string[]> {
    const problems: string[] = [];
    const realm = await this.tenants.find(CONTROL_PLANE_TENANT_ID);
    if (!realm || realm.kind !== CONTROL_PLANE_KIND || realm.status !== 'active')
      problems.push('control-plane realm is missing or inactive');
    const client = await this.clients.find(this.config.consoleClientId);
    if (!client) {
      problems.push('console client row is missing');
      return problems;
    }
    if (client.tenantId !== CONTROL_PLANE_TENANT_ID || client.type !== 'confidential' || !client.enabled) {
      problems.push('console client row is not an enabled confidential client of the control plane');
    }
    const callback = consoleCallbackUri(this.config);
    if (client.redirectUris.length !== 1 || client.redirectUris[0] !== callback) {
      problems.push('console client redirect URI does not match CONSOLE_ORIGIN');
    }
    if (
      !client.secretDigest ||
      !clientSecretMatches(this.pseudonymizer, client.id, this.config.consoleClientSecret, client.secretDigest)
    ) {
      problems.push('console client secret does not match CONSOLE_CLIENT_SECRET');
    }
    return problems;
  }
}
