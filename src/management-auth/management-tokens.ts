import { Inject, Injectable } from '@nestjs/common';
import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { CONTROL_PLANE_TENANT_ID } from '../directory/tenants.repository';
import { newId } from '../platform/crypto/ids';
import { KeyRing } from '../platform/keys/key-ring';

export const MANAGEMENT_AUDIENCE = 'urn:svc:management';
const FUTURE_SKEW_SECONDS = 60;
const REFUSED_HEADERS = ['jku', 'x5u', 'jwk', 'x5c', 'crit'] as const;

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
 *
 * Verification is cached by token string until expiry, so a bearer check costs one signature
 * verification per token rather than per request. Only fully valid tokens enter the cache.
 */
@Injectable()
export class ManagementTokens {
  private readonly issuer: string;
  private readonly verified = new LRUCache<string, ManagementClaims>({ max: 20_000 });

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: KeyRing,
  ) {
    this.issuer = controlPlaneIssuer(config);
  }

  issue(input: { userId: string; sessionId: string; scope: string }): { token: string; expiresIn: number } {
    const now = Math.floor(Date.now() / 1000);
    const expiresIn = this.config.ttl.managementAccessToken;
    const token = this.keys.sign('RS256', 'at+jwt', {
      iss: this.issuer,
      sub: input.userId,
      aud: MANAGEMENT_AUDIENCE,
      iat: now,
      exp: now + expiresIn,
      jti: newId('evt').slice(4),
      client_id: this.config.consoleClientId,
      sid: input.sessionId,
      scope: input.scope,
      token_use: 'management',
    });
    return { token, expiresIn };
  }

  /** The token's claims when every rule holds, else null. Never throws for bad input. */
  async verify(token: string): Promise<ManagementClaims | null> {
    const now = Math.floor(Date.now() / 1000);
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.exp > now) return cached;
      this.verified.delete(token);
      return null;
    }
    const claims = await this.verifyUncached(token, now);
    if (claims) this.verified.set(token, claims, { ttl: (claims.exp - now) * 1000 });
    return claims;
  }

  private async verifyUncached(token: string, now: number): Promise<ManagementClaims | null> {
    let payload: JWTPayload;
    try {
      const header = decodeProtectedHeader(token);
      if (header.alg !== 'RS256' || REFUSED_HEADERS.some((h) => h in header)) return null;
      ({ payload } = await jwtVerify(token, (h) => this.keyFor(h.kid), {
        algorithms: ['RS256'],
        issuer: this.issuer,
        audience: MANAGEMENT_AUDIENCE,
        typ: 'at+jwt',
        clockTolerance: FUTURE_SKEW_SECONDS,
        requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'sid', 'client_id', 'token_use', 'scope'],
      }));
    } catch {
      return null;
    }
    // jose accepts an audience array containing the value and tolerates skew on exp; both are
    // tightened here: the audience must be exactly the string, expiry has no grace.
    const { aud, exp, iat, sub, sid, client_id, token_use, scope } = payload;
    if (aud !== MANAGEMENT_AUDIENCE || token_use !== 'management' || client_id !== this.config.consoleClientId)
      return null;
    if (typeof exp !== 'number' || exp <= now || typeof iat !== 'number' || iat > now + FUTURE_SKEW_SECONDS)
      return null;
    if (typeof sub !== 'string' || typeof sid !== 'string' || !sid.startsWith('ses_') || typeof scope !== 'string')
      return null;
    return { sub, sid, clientId: client_id, scope: scope.split(' ').filter(Boolean), exp };
  }

  private keyFor(kid: string | undefined): ReturnType<KeyRing['verificationKey']> & object {
    const key = this.keys.verificationKey('RS256', kid);
    if (!key) throw new Error('unknown kid');
    return key;
  }
}
