import { decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import type { KeyRing, SigningAlg } from './key-ring';

/** `iat` and `nbf` may be this far ahead of our clock (issuer clock skew); `exp` gets no grace. */
export const FUTURE_SKEW_SECONDS = 60;
/**
 * Headers that would let a token name its own key or extensions (RFC 7515 §4.1): a token carrying
 * any of them is refused before its signature is even looked at.
 */
const REFUSED_HEADERS = ['jku', 'x5u', 'jwk', 'x5c', 'crit'] as const;

/** A signature-checked payload whose `exp` lies ahead and whose `iat` is not in the future. */
export type TimelyPayload = JWTPayload & { readonly exp: number; readonly iat: number };

/** What one realm requires of its access tokens, beyond the rules every realm shares. */
export interface AccessTokenRules<C> {
  readonly issuer: string;
  /** Checked by jose; a realm that needs the exact string checks `aud` again in `claimsOf`. */
  readonly audience?: string;
  readonly requiredClaims: readonly string[];
  /** The realm's claim rules: the claims when they hold, else null. */
  readonly claimsOf: (payload: TimelyPayload) => C | null;
  /** Whether claims verified earlier (and cached) also fit this request, e.g. the route's tenant. */
  readonly fits: (claims: C) => boolean;
}

/**
 * Verifies `at+jwt` access tokens of one realm (one algorithm of the key ring): pinned algorithm,
 * refused key-bearing headers, issuer, type, required claims, expiry without grace and at most
 * FUTURE_SKEW_SECONDS of issuer clock skew, then the realm's own rules. Fully valid tokens are
 * cached until they expire, so a bearer check costs one signature verification per token rather
 * than per request. Never throws for bad input: any failure is null.
 */
export class AccessTokenVerifier<C extends { readonly exp: number }> {
  private readonly verified = new LRUCache<string, C>({ max: 20_000 });

  constructor(
    private readonly keys: KeyRing,
    private readonly alg: SigningAlg,
  ) {}

  async verify(token: string, rules: AccessTokenRules<C>): Promise<C | null> {
    const now = Math.floor(Date.now() / 1000);
    const cached = this.verified.get(token);
    if (cached) return cached.exp > now && rules.fits(cached) ? cached : null;
    const payload = await this.verifySignature(token, rules, now);
    const claims = payload ? rules.claimsOf(payload) : null;
    if (claims) this.verified.set(token, claims, { ttl: (claims.exp - now) * 1000 });
    return claims;
  }

  private async verifySignature(token: string, rules: AccessTokenRules<C>, now: number): Promise<TimelyPayload | null> {
    let payload: JWTPayload;
    try {
      const header = decodeProtectedHeader(token);
      if (header.alg !== this.alg || REFUSED_HEADERS.some((h) => h in header)) return null;
      ({ payload } = await jwtVerify(
        token,
        (h) => {
          const key = this.keys.verificationKey(this.alg, h.kid);
          if (!key) throw new Error('unknown kid');
          return key;
        },
        {
          algorithms: [this.alg],
          issuer: rules.issuer,
          audience: rules.audience,
          typ: 'at+jwt',
          clockTolerance: FUTURE_SKEW_SECONDS,
          requiredClaims: [...rules.requiredClaims],
        },
      ));
    } catch {
      return null;
    }
    // jose tolerates the skew on exp too; expiry has no grace here.
    const { exp, iat } = payload;
    if (typeof exp !== 'number' || exp <= now || typeof iat !== 'number' || iat > now + FUTURE_SKEW_SECONDS)
      return null;
    return { ...payload, exp, iat };
  }
}
