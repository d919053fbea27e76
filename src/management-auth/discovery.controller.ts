import { Controller, Inject } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { Route } from '../http/route';
import { KeyRing } from '../platform/keys/key-ring';
import { MANAGEMENT_AUTH_ROUTES } from './management-auth.routes';
import { controlPlaneIssuer } from './management-tokens';
import { MANAGEMENT_GRANT_TYPES } from './token.service';
import { MANAGEMENT_SCOPES } from '../directory/control-plane';

/** Control-plane discovery and JWKS (contract section 3). The JWKS holds public RS256 keys only. */
@Controller()
export class DiscoveryController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: KeyRing,
  ) {}

  @Route(MANAGEMENT_AUTH_ROUTES.discovery)
  configuration(): Record<string, unknown> {
    const base = this.config.authOrigin;
    return {
      issuer: controlPlaneIssuer(this.config),
      authorization_endpoint: `${base}/management-auth/authorize`,
      token_endpoint: `${base}/management-auth/token`,
      revocation_endpoint: `${base}/management-auth/revoke`,
      jwks_uri: `${base}/t/control-plane/.well-known/jwks.json`,
      response_types_supported: ['code'],
      grant_types_supported: [...MANAGEMENT_GRANT_TYPES],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic'],
      scopes_supported: [...MANAGEMENT_SCOPES],
      authorization_response_iss_parameter_supported: true,
      id_token_signing_alg_values_supported: ['RS256'],
      subject_types_supported: ['public'],
    };
  }

  @Route(MANAGEMENT_AUTH_ROUTES.jwks)
  jwks(): { keys: unknown[] } {
    return this.keys.jwks('RS256');
  }
}
