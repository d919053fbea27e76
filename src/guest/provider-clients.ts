import { Inject, Injectable } from '@nestjs/common';
import { importPKCS8, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { custom, errors, generators, Issuer, type BaseClient } from 'openid-client';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { IdentityProvider } from '../directory/identity-providers.repository';
import { AppError, DependencyUnavailableError } from '../errors/app-error';
import { CLOCK_TOLERANCE_SECONDS, issuedInTheFuture, provenClaims, type ProvenIdToken } from './provider-id-tokens';

/** What the browser flow binds to its state: the PKCE verifier and the nonce (contract 14). */
export interface AuthorizationChecks {
  readonly state: string;
  readonly nonce: string;
  readonly codeVerifier: string;
}

/** Lifetime of Sign in with Apple's client-secret JWT: made per token request, used at once. */
const APPLE_SECRET_TTL_SECONDS = 300;

/**
 * The browser flow's side of an OpenID Connect provider, through openid-client: the authorization
 * URL (code, PKCE S256, state, nonce), and the callback that exchanges the code and checks the ID
 * token (signature from the issuer's JWKS, `iss`, `aud`, `exp`, `nonce`, and `iat` not in the future,
 * contract 8), after the answer's own `iss` (RFC 9207). The token request
 * authenticates as discovery allowed when the provider was added; a provider with Apple's options
 * sends a fresh ES256 client-secret JWT by client_secret_post. Each issuer's keys are cached with
 * it, so a callback does not fetch the JWKS every time.
 */
@Injectable()
export class ProviderClients {
  private readonly issuers = new LRUCache<string, Issuer<BaseClient>>({ max: 500 });

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  redirectUri(tenantId: string): string {
    return `${this.config.authOrigin}/t/${encodeURIComponent(tenantId)}/providers/callback`;
  }

  /**
   * `askConsent`: the request was started by a page and any browser may follow it (the bounce), so
   * the player must approve it at the provider, which otherwise may answer at once for an account
   * it knows: a link sent to a victim would complete without the victim approving anything.
   */
  async authorizeUrl(provider: IdentityProvider, checks: AuthorizationChecks, askConsent: boolean): Promise<string> {
    const client = await this.client(provider, false);
    return client.authorizationUrl({
      scope: provider.scopes.join(' '),
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: generators.codeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
      // OIDC Core 3.1.2.1. Apple takes no `prompt`: its own sheet asks the person every time.
      ...(askConsent && provider.credential.kind !== 'apple_key' ? { prompt: 'consent' } : {}),
      // Sign in with Apple answers a request for the email or name scope only by form_post.
      ...(provider.credential.kind === 'apple_key' && provider.scopes.some((s) => s !== 'openid')
        ? { response_mode: 'form_post' }
        : {}),
    });
  }

  /** Exchanges the code and returns what the checked ID token proves. */
  async callback(
    provider: IdentityProvider,
    params: { code: string; state: string; iss?: string | undefined },
    checks: AuthorizationChecks,
  ): Promise<ProvenIdToken> {
    try {
      const client = await this.client(provider, true);
      const tokens = await client.callback(this.redirectUri(provider.tenantId), params, {
        response_type: 'code',
        state: checks.state,
        nonce: checks.nonce,
        code_verifier: checks.codeVerifier,
      });
      if (!tokens.id_token) throw new AppError('invalid_grant', 'The provider sent no ID token.');
      const claims = tokens.claims();
      if (issuedInTheFuture(claims)) throw new AppError('invalid_grant', 'The ID token is issued in the future.');
      return provenClaims(claims);
    } catch (err) {
      if (err instanceof AppError) throw err;
      if (providerUnavailable(err)) throw new DependencyUnavailableError('identity_provider', err);
      // The provider refused the code, or its ID token failed a check.
      throw new AppError('invalid_grant', 'The provider’s answer did not pass its checks.');
    }
  }

  private async client(provider: IdentityProvider, forTokenRequest: boolean): Promise<BaseClient> {
    const issuer = this.issuer(provider);
    const secret =
      provider.credential.kind === 'client_secret'
        ? provider.credential.secret
        : forTokenRequest
          ? await appleClientSecret(provider, provider.credential)
          : undefined;
    const client = new issuer.Client({
      client_id: provider.clientId,
      ...(secret === undefined ? {} : { client_secret: secret }),
      redirect_uris: [this.redirectUri(provider.tenantId)],
      response_types: ['code'],
      token_endpoint_auth_method: provider.endpoints.token_endpoint_auth_method,
      id_token_signed_response_alg: provider.endpoints.id_token_signed_response_alg,
    });
    client[custom.http_options] = (_url, options) => ({ ...options, timeout: this.config.dependencyTimeoutMs });
    // openid-client allows no skew on `nbf` and `exp` by default: an issuer whose clock runs a
    // second ahead of ours would fail every browser sign-in that the native flow accepts.
    client[custom.clock_tolerance] = CLOCK_TOLERANCE_SECONDS;
    return client;
  }

  private issuer(provider: IdentityProvider): Issuer<BaseClient> {
    const e = provider.endpoints;
    const issSupported = e.authorization_response_iss_parameter_supported === true;
    const key = JSON.stringify([provider.issuer, e.authorization_endpoint, e.token_endpoint, e.jwks_uri, issSupported]);
    let issuer = this.issuers.get(key);
    if (!issuer) {
      issuer = new Issuer({
        issuer: provider.issuer,
        authorization_endpoint: e.authorization_endpoint,
        token_endpoint: e.token_endpoint,
        jwks_uri: e.jwks_uri,
        // RFC 9207 section 2.4: an issuer that names itself in its answers has every answer that
        // lacks `iss` refused (openid-client's callback), so a response injected from another
        // issuer's authorization endpoint (a mix-up) never reaches this issuer's token endpoint.
        authorization_response_iss_parameter_supported: issSupported,
      });
      issuer[custom.http_options] = (_url, options) => ({ ...options, timeout: this.config.dependencyTimeoutMs });
      this.issuers.set(key, issuer);
    }
    return issuer;
  }
}

/**
 * The provider could not answer (unreachable, too slow, failing with 5xx): the game may offer a
 * retry (`temporarily_unavailable`). A refusal (4xx) or a failed check of its answer is not that.
 */
function providerUnavailable(err: unknown): boolean {
  if (err instanceof errors.OPError) return (err.response?.statusCode ?? 500) >= 500;
  // openid-client reports its own timeout as an RPError.
  if (err instanceof errors.RPError) return /timed out/.test(err.message);
  return true;
}

/**
 * Sign in with Apple's client secret: an ES256 JWT from the studio's team id, key id and private
 * key, `aud` the issuer, `sub` the client id (Apple's "Creating a client secret"). Made per token
 * request, so it never outlives its use.
 */
async function appleClientSecret(
  provider: IdentityProvider,
  credential: { teamId: string; keyId: string; privateKeyPem: string },
): Promise<string> {
  const key = await importPKCS8(credential.privateKeyPem, 'ES256');
  return new SignJWT({})
    .setProtectedHeader({ alg: 'ES256', kid: credential.keyId })
    .setIssuer(credential.teamId)
    .setSubject(provider.clientId)
    .setAudience(provider.issuer)
    .setIssuedAt()
    .setExpirationTime(`${APPLE_SECRET_TTL_SECONDS}s`)
    .sign(key);
}
