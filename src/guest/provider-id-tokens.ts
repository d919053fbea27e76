import { Inject, Injectable } from '@nestjs/common';
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { IdentityProvider } from '../directory/identity-providers.repository';
import { AppError, DependencyUnavailableError } from '../errors/app-error';

/** What a checked ID token proves. */
export interface ProvenIdToken {
  readonly subject: string;
  /** Only an address the provider marks verified (`email_verified` true, or Apple's string "true"). */
  readonly verifiedEmail: string | null;
  readonly expiresAt: number;
}

/** Clock skew allowed on `exp`, `iat` and `nbf`, in both flows: within the 60 s of contract 8. */
export const CLOCK_TOLERANCE_SECONDS = 30;
const MAX_TOKEN_AGE_SECONDS = 24 * 3600;

/**
 * Checks ID tokens that a platform's own SDK obtained (contract 14, native flow) with jose: the
 * signature against the issuer's JWKS (fetched once per issuer and again only for an unknown
 * `kid`, at most every 30 s), `iss`, `aud` (the provider's client id or one of its native client
 * ids; for several audiences `azp` too), `exp`, `iat`/`nbf` and, when the caller gives one,
 * `nonce`. A token that fails any check is 400 invalid_grant; an issuer whose keys cannot be read
 * is 503.
 */
@Injectable()
export class ProviderIdTokens {
  private readonly keySets = new LRUCache<string, ReturnType<typeof createRemoteJWKSet>>({ max: 500 });

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async verify(provider: IdentityProvider, idToken: string, nonce: string | undefined): Promise<ProvenIdToken> {
    const audiences = [provider.clientId, ...provider.nativeClientIds];
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.keySet(provider.endpoints.jwks_uri), {
        issuer: acceptedIssuers(provider.issuer),
        audience: audiences,
        algorithms: [provider.endpoints.id_token_signed_response_alg],
        requiredClaims: ['sub', 'exp', 'iat'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        // jose checks that `iat` is not in the future only with a maximum age (contract 8); `exp`
        // bounds a token's life, this only stops a token that claims to be from tomorrow.
        maxTokenAge: MAX_TOKEN_AGE_SECONDS,
      }));
    } catch (err) {
      if (isKeySetFailure(err)) throw new DependencyUnavailableError('identity_provider', err);
      throw new AppError('invalid_grant', 'The ID token is not valid for this provider.');
    }
    if ((nonce !== undefined && payload.nonce !== nonce) || !issuedToOneOf(payload, audiences))
      throw new AppError('invalid_grant', 'The ID token is not valid for this provider.');
    return provenClaims(payload);
  }

  private keySet(jwksUri: string): ReturnType<typeof createRemoteJWKSet> {
    let set = this.keySets.get(jwksUri);
    if (!set) {
      set = createRemoteJWKSet(new URL(jwksUri), {
        timeoutDuration: this.config.dependencyTimeoutMs,
        cooldownDuration: 30_000,
        cacheMaxAge: 10 * 60_000,
      });
      this.keySets.set(jwksUri, set);
    }
    return set;
  }
}

/**
 * The `iss` values an ID token of this issuer may carry. Google's tokens name it either with or
 * without the scheme (Google's "Authenticate with a backend server": `accounts.google.com` or
 * `https://accounts.google.com`); every other issuer exactly as discovered.
 */
export function acceptedIssuers(issuer: string): string[] {
  return issuer === 'https://accounts.google.com' ? [issuer, 'accounts.google.com'] : [issuer];
}

/**
 * OpenID Connect Core 3.1.3.7 (points 3 to 5): jose accepts a token whose `aud` merely includes one
 * of ours, so a token for several audiences must also name in `azp` the party it was issued to, and
 * that party must be one of the provider's clients: otherwise another application at the same
 * issuer, which had itself given our client as an extra audience, could replay its own players'
 * tokens here and sign in as them. A token for one audience is not asked about `azp`: Google's
 * Android tokens name the web client as `aud` and the Android client as `azp` (openid-client does
 * the same for the browser flow, with the web client only).
 */
export function issuedToOneOf(claims: Record<string, unknown>, clientIds: readonly string[]): boolean {
  const { aud, azp } = claims;
  if (!Array.isArray(aud) || aud.length <= 1) return true;
  return typeof azp === 'string' && clientIds.includes(azp);
}

/** `sub`, and the email when verified, from checked claims (ID tokens of either flow). */
export function provenClaims(claims: Record<string, unknown>): ProvenIdToken {
  const { sub, email, email_verified: verified, exp } = claims;
  if (typeof sub !== 'string' || sub.length === 0 || sub.length > 255 || typeof exp !== 'number')
    throw new AppError('invalid_grant', 'The ID token has no usable subject.');
  const emailOk = (verified === true || verified === 'true') && typeof email === 'string' && email.length <= 254;
  return { subject: sub, verifiedEmail: emailOk ? email.toLowerCase() : null, expiresAt: exp };
}

/**
 * Contract 8: a JWT whose `iat` lies further in the future than the clock tolerance is refused.
 * jose checks it for the native flow (`maxTokenAge`); openid-client, which checks the browser
 * flow's ID token, checks `nbf` but not `iat`, so the callback asks this too.
 */
export function issuedInTheFuture(
  claims: Record<string, unknown>,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  return typeof claims.iat !== 'number' || claims.iat > nowSeconds + CLOCK_TOLERANCE_SECONDS;
}

/** The issuer's keys could not be read (network, timeout, not a JWK Set): not the token's fault. */
function isKeySetFailure(err: unknown): boolean {
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) return true;
  if (err instanceof errors.JOSEError) return err.code === 'ERR_JOSE_GENERIC';
  return true;
}
