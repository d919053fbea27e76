import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AccessTokenVerifier } from '../platform/keys/access-token-verifier';
import { KeyRing } from '../platform/keys/key-ring';
import { newTokenId } from '../directory/identifiers';

export interface CustomerClaims {
  readonly tenantId: string;
  readonly sub: string;
  readonly sid: string;
  readonly clientId: string;
  readonly scope: readonly string[];
  readonly exp: number;
}

export function tenantIssuer(config: AppConfig, tenantId: string): string {
  return `${config.authOrigin}/t/${tenantId}`;
}

/**
 * Customer (guest) tokens, contract section 6: issuer `{AUTH_ORIGIN}/t/{tenantId}`, audience the
 * client id, `token_use: access`. Signed with the ES256 keys of the key ring, which never sign
 * management tokens, so a customer token can never pass the management bearer check.
 */
@Injectable()
export class CustomerTokens {
  private readonly verifier: AccessTokenVerifier<CustomerClaims>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: KeyRing,
  ) {
    this.verifier = new AccessTokenVerifier(keys, 'ES256');
  }

  async issueAccess(input: {
    tenantId: string;
    userId: string;
    sessionId: string;
    clientId: string;
    scope: string;
    guest: boolean;
  }): Promise<{ token: string; expiresIn: number }> {
    const now = Math.floor(Date.now() / 1000);
    const expiresIn = this.config.ttl.guestAccessToken;
    const token = await this.keys.sign('ES256', 'at+jwt', {
      iss: tenantIssuer(this.config, input.tenantId),
      sub: input.userId,
      aud: input.clientId,
      iat: now,
      exp: now + expiresIn,
      jti: newTokenId(),
      client_id: input.clientId,
      sid: input.sessionId,
      scope: input.scope,
      token_use: 'access',
      // Contract section 11: tells a game server whether the player is still a guest.
      guest: input.guest,
    });
    return { token, expiresIn };
  }

  /** OpenID Connect ID token, only for clients allowed the `openid` scope. */
  issueId(input: {
    tenantId: string;
    userId: string;
    clientId: string;
    sessionId: string;
    guest: boolean;
  }): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return this.keys.sign('ES256', 'JWT', {
      iss: tenantIssuer(this.config, input.tenantId),
      sub: input.userId,
      aud: input.clientId,
      iat: now,
      exp: now + this.config.ttl.guestAccessToken,
      auth_time: now,
      sid: input.sessionId,
      guest: input.guest,
    });
  }

  /** The claims when every rule holds for this tenant, else null. */
  verifyAccess(token: string, tenantId: string): Promise<CustomerClaims | null> {
    return this.verifier.verify(token, {
      issuer: tenantIssuer(this.config, tenantId),
      requiredClaims: ['sub', 'aud', 'exp', 'iat', 'sid', 'client_id', 'token_use', 'scope'],
      // The audience is the client the token was issued to, a single string (contract section 6).
      claimsOf: ({ aud, exp, sub, sid, client_id, token_use, scope }) => {
        if (typeof aud !== 'string' || aud !== client_id || token_use !== 'access') return null;
        if (typeof sub !== 'string' || typeof sid !== 'string' || typeof scope !== 'string') return null;
        return { tenantId, sub, sid, clientId: aud, scope: scope.split(' ').filter(Boolean), exp };
      },
      fits: (claims) => claims.tenantId === tenantId,
    });
  }
}
