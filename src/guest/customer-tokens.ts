import { Inject, Injectable } from '@nestjs/common';
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { newId } from '../platform/crypto/ids';
import { KeyRing } from '../platform/keys/key-ring';

const FUTURE_SKEW_SECONDS = 60;
const REFUSED_HEADERS = ['jku', 'x5u', 'jwk', 'x5c', 'crit'] as const;

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
  private readonly verified = new LRUCache<string, CustomerClaims>({ max: 20_000 });

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: KeyRing,
  ) {}

  issueAccess(input: {
    tenantId: string;
    userId: string;
    sessionId: string;
    clientId: string;
    scope: string;
    guest: boolean;
  }): { token: string; expiresIn: number } {
    const now = Math.floor(Date.now() / 1000);
    const expiresIn = this.config.ttl.guestAccessToken;
    const token = this.keys.sign('ES256', 'at+jwt', {
      iss: tenantIssuer(this.config, input.tenantId),
      sub: input.userId,
      aud: input.clientId,
      iat: now,
      exp: now + expiresIn,
      jti: newId('evt').slice(4),
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
  issueId(input: { tenantId: string; userId: string; clientId: string; sessionId: string; guest: boolean }): string {
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
  async verifyAccess(token: string, tenantId: string): Promise<CustomerClaims | null> {
    const now = Math.floor(Date.now() / 1000);
    const cached = this.verified.get(token);
    if (cached) return cached.tenantId === tenantId && cached.exp > now ? cached : null;
    const claims = await this.verifyUncached(token, tenantId, now);
    if (claims) this.verified.set(token, claims, { ttl: (claims.exp - now) * 1000 });
    return claims;
  }

  private async verifyUncached(token: string, tenantId: string, now: number): Promise<CustomerClaims | null> {
    let payload: JWTPayload;
    try {
      const header = decodeProtectedHeader(token);
      if (header.alg !== 'ES256' || REFUSED_HEADERS.some((h) => h in header)) return null;
      ({ payload } = await jwtVerify(
        token,
        (h) => {
          const key = this.keys.verificationKey('ES256', h.kid);
          if (!key) throw new Error('unknown kid');
          return key;
        },
        {
          algorithms: ['ES256'],
          issuer: tenantIssuer(this.config, tenantId),
          typ: 'at+jwt',
          clockTolerance: FUTURE_SKEW_SECONDS,
          requiredClaims: ['sub', 'aud', 'exp', 'iat', 'sid', 'client_id', 'token_use', 'scope'],
        },
      ));
    } catch {
      return null;
    }
    const { aud, exp, iat, sub, sid, client_id, token_use, scope } = payload;
    if (typeof aud !== 'string' || aud !== client_id || token_use !== 'access') return null;
    if (typeof exp !== 'number' || exp <= now || typeof iat !== 'number' || iat > now + FUTURE_SKEW_SECONDS)
      return null;
    if (typeof sub !== 'string' || typeof sid !== 'string' || typeof scope !== 'string') return null;
    return { tenantId, sub, sid, clientId: aud, scope: scope.split(' ').filter(Boolean), exp };
  }
}
