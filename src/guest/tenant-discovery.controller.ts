import { Controller, Inject, Param } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CUSTOMER_SCOPES } from '../directory/customer-scopes';
import { Route } from '../http/route';
import { KeyRing } from '../platform/keys/key-ring';
import { CUSTOMER_TOKEN_ROUTES } from './customer-token.routes';
import { CUSTOMER_GRANT_TYPES } from './customer-token.service';
import { tenantIssuer } from './customer-tokens';
import { TenantClients } from './tenant-clients';
import { TenantIdPipe } from './tenant-id.pipe';

/** A tenant's discovery document and JWKS (public ES256 keys only; contract section 6). */
@Controller()
export class TenantDiscoveryController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: KeyRing,
    private readonly clients: TenantClients,
  ) {}

  @Route(CUSTOMER_TOKEN_ROUTES.discovery)
  async configuration(@Param('tenantId', TenantIdPipe) tenantId: string): Promise<Record<string, unknown>> {
    await this.clients.requireActiveTenant(tenantId);
    const base = `${this.config.authOrigin}/t/${tenantId}`;
    return {
      issuer: tenantIssuer(this.config, tenantId),
      token_endpoint: `${base}/token`,
      revocation_endpoint: `${base}/revoke`,
      jwks_uri: `${base}/.well-known/jwks.json`,
      grant_types_supported: [...CUSTOMER_GRANT_TYPES],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: [...CUSTOMER_SCOPES],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
    };
  }

  @Route(CUSTOMER_TOKEN_ROUTES.jwks)
  async jwks(@Param('tenantId', TenantIdPipe) tenantId: string): Promise<{ keys: unknown[] }> {
    await this.clients.requireActiveTenant(tenantId);
    return this.keys.jwks('ES256');
  }
}
