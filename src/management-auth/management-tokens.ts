import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AccessTokenVerifier, type AccessTokenRules } from '../platform/keys/access-token-verifier';
import { KeyRing } from '../platform/keys/key-ring';
import { CONTROL_PLANE_TENANT_ID, MANAGEMENT_AUDIENCE } from '../directory/control-plane';
import { newTokenId } from '../directory/identifiers';

export interface ManagementClaims {
  readonly sub: string;
  readonly sid: string;
  readonly clientId: string;
  readonly scope: readonly string[];
  readonly exp: number;
}

export function controlPlaneIssuer(config: AppConfig): string {
  return `${config.authOrigin}/t/${CONTROL_PLANE_TENANT_ID}`;
}

/**
 * Management access tokens (spec 2.2, contract section 3): RS256, 5 minutes, exact audience
 * string, `token_use: management`, the console client id, bound to a session id.
 * Verified by the shared AccessTokenVerifier (RS256 keys only), plus the rules below.
 */
@Injectable()
export class ManagementTokens {
  private readonly issuer: string;
  private readonly verifier: AccessTokenVerifier<ManagementClaims>;
  private readonly rules: AccessTokenRules<ManagementClaims>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: KeyRing,
  ) {
    this.issuer = controlPlaneIssuer(config);
    this.verifier = new AccessTokenVerifier(keys, 'RS256');
    this.rules = {
      issuer: this.issuer,
      audience: MANAGEMENT_AUDIENCE,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'sid', 'client_id', 'token_use', 'scope'],
      claimsOf: ({ aud, exp, sub, sid, client_id, token_use, scope }) => {
        // jose accepts an audience array containing the value: the audience must be exactly the string.
        if (aud !== MANAGEMENT_AUDIENCE || token_use !== 'management' || client_id !== config.consoleClientId)
          return null;
        if (typeof sub !== 'string' || typeof sid !== 'string' || !sid.startsWith('ses_') || typeof scope !== 'string')
          return null;
        return { sub, sid, clientId: client_id, scope: scope.split(' ').filter(Boolean), exp };
      },
      fits: () => true,
    };
  }

  async issue(input: {
    userId: string;
    sessionId: string;
    scope: string;
  }): Promise<{ token: string; expiresIn: number }> {
    const now = Math.floor(Date.now() / 1000);
    const expiresIn = this.config.ttl.managementAccessToken;
    const token = await this.keys.sign('RS256', 'at+jwt', {
      iss: this.issuer,
      sub: input.userId,
      aud: MANAGEMENT_AUDIENCE,
      iat: now,
      exp: now + expiresIn,
      jti: newTokenId(),
      client_id: this.config.consoleClientId,
      sid: input.sessionId,
      scope: input.scope,
      token_use: 'management',
    });
    return { token, expiresIn };
  }

  /** The token's claims when every rule holds, else null. Never throws for bad input. */
  verify(token: string): Promise<ManagementClaims | null> {
    return this.verifier.verify(token, this.rules);
  }
}
