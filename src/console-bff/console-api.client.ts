import { Inject, Injectable, Logger } from '@nestjs/common';
import { custom, errors, generators, Issuer, type BaseClient, type TokenSet } from 'openid-client';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { DependencyUnavailableError } from '../errors/app-error';

/** The management scope the console asks for (spec 4.2 names `tenant:read`). */
const CONSOLE_SCOPE = 'tenant:read';

export interface TokenGrant {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly sessionId: string;
  /** Lifetime the API stated, in seconds. */
  readonly expiresIn: number;
}

/**
 * How a grant ended. `rejected` means the API answered 400/401 (or a protocol check failed):
 * the grant will never work, so the console session must go (spec 3, 7.1). `unavailable` is a
 * transient failure: timeouts, refused connections, 5xx. The session is kept (spec 3).
 */
export type GrantOutcome =
  | { readonly kind: 'granted'; readonly grant: TokenGrant }
  | { readonly kind: 'rejected'; readonly reason: string }
  | { readonly kind: 'unavailable'; readonly reason: string };

export interface UpstreamResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

export interface CallbackParams {
  readonly code?: string;
  readonly state?: string;
  readonly iss?: string;
  readonly error?: string;
  readonly error_description?: string;
}

/**
 * The console BFF as an OAuth client of the API (issue 3): openid-client over HTTP at
 * AUTH_INTERNAL_URL (default AUTH_ORIGIN), as a separately deployed BFF would do; never the API's
 * services in-process. Discovery is lazy and retried after a failure, so the BFF starts even
 * while the API is away and answers 503 until it is back.
 *
 * Why discovery "as is": when AUTH_INTERNAL_URL differs from AUTH_ORIGIN, the discovered
 * authorization and token endpoints still name AUTH_ORIGIN. The authorize URL must be public
 * anyway (the browser goes there); the token endpoint then has to be reachable from the BFF at
 * its public address too. Resource calls (current, revoke, proxy) use AUTH_INTERNAL_URL.
 */
@Injectable()
export class ConsoleApiClient {
  private readonly logger = new Logger('ConsoleApiClient');
  private client: Promise<BaseClient> | null = null;
  readonly redirectUri: string;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.redirectUri = `${config.consoleOrigin}/api/auth/callback`;
    // Every call to the API is bounded like every other dependency call (config.dependencyTimeoutMs).
    custom.setHttpOptionsDefaults({ timeout: config.dependencyTimeoutMs });
  }

  /** State and S256 verifier from openid-client's CSPRNG generators (issue 3). */
  newChecks(): { state: string; codeVerifier: string } {
    return { state: generators.state(32), codeVerifier: generators.codeVerifier(32) };
  }

  async authorizationUrl(state: string, codeVerifier: string): Promise<string> {
    const client = await this.discovered();
    return client.authorizationUrl({
      response_type: 'code',
      redirect_uri: this.redirectUri,
      scope: CONSOLE_SCOPE,
      state,
      code_challenge: generators.codeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  /**
   * Code exchange with the console client's credentials (HTTP Basic, server-side only).
   * openid-client checks `state` again and the RFC 9207 `iss` parameter before exchanging.
   */
  async exchange(params: CallbackParams, checks: { state: string; codeVerifier: string }): Promise<GrantOutcome> {
    return this.grant(async (client) =>
      client.oauthCallback(
        this.redirectUri,
        { ...params },
        { state: checks.state, code_verifier: checks.codeVerifier, response_type: 'code' },
      ),
    );
  }

  async refresh(refreshToken: string): Promise<GrantOutcome> {
    return this.grant((client) => client.refresh(refreshToken));
  }

  /**
   * A request to the API with a bearer the server adds. The upstream request is built fresh:
   * only Authorization, Accept and X-Request-Id; never the browser's Cookie or Authorization.
   * Throws DependencyUnavailableError on transport failure (timeout, refused, reset).
   */
  async request(
    method: 'GET' | 'POST',
    path: string,
    accessToken: string,
    requestId: string | undefined,
  ): Promise<UpstreamResponse> {
    const client = await this.discovered();
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (requestId) headers['X-Request-Id'] = requestId;
    try {
      const res = await client.requestResource(`${this.config.authInternalUrl}${path}`, accessToken, {
        method,
        headers,
      });
      return {
        status: res.statusCode ?? 502,
        headers: res.headers,
        body: Buffer.isBuffer(res.body) ? res.body : Buffer.alloc(0),
      };
    } catch (err) {
      throw new DependencyUnavailableError('console-api', err);
    }
  }

  private async grant(run: (client: BaseClient) => Promise<TokenSet>): Promise<GrantOutcome> {
    let tokens: TokenSet;
    try {
      tokens = await run(await this.discovered());
    } catch (err) {
      return classify(err);
    }
    const { access_token, refresh_token, session_id, expires_in } = tokens;
    if (
      typeof access_token !== 'string' ||
      typeof refresh_token !== 'string' ||
      typeof session_id !== 'string' ||
      !session_id.startsWith('ses_') ||
      typeof expires_in !== 'number' ||
      expires_in <= 0
    ) {
      // Not the contract's token answer: a protocol failure, never worth retrying.
      return { kind: 'rejected', reason: 'malformed token response' };
    }
    return {
      kind: 'granted',
      grant: { accessToken: access_token, refreshToken: refresh_token, sessionId: session_id, expiresIn: expires_in },
    };
  }

  private async discovered(): Promise<BaseClient> {
    this.client ??= Issuer.discover(
      `${this.config.authInternalUrl}/t/control-plane/.well-known/openid-configuration`,
    ).then(
      (issuer) =>
        new issuer.Client({
          client_id: this.config.consoleClientId,
          client_secret: this.config.consoleClientSecret,
          redirect_uris: [this.redirectUri],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        }),
    );
    try {
      return await this.client;
    } catch (err) {
      // Forget the failed attempt so the next request discovers again.
      this.client = null;
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'API discovery failed');
      throw new DependencyUnavailableError('console-api', err);
    }
  }
}

function classify(err: unknown): GrantOutcome {
  if (err instanceof DependencyUnavailableError) return { kind: 'unavailable', reason: 'discovery failed' };
  if (err instanceof errors.OPError) {
    const status = err.response?.statusCode;
    // An error answer of the API (400 invalid_grant, 401 invalid_client) or an error returned
    // to the callback is final; a 5xx is the API being unwell.
    if (status !== undefined && status >= 500) return { kind: 'unavailable', reason: `API answered ${status}` };
    return { kind: 'rejected', reason: err.error ?? 'error' };
  }
  if (err instanceof errors.RPError) {
    // openid-client reports its own request timeout as an RPError; every other RPError is a
    // failed protocol check (state, iss, missing code).
    if (/timed out/.test(err.message)) return { kind: 'unavailable', reason: err.message };
    return { kind: 'rejected', reason: err.message };
  }
  return { kind: 'unavailable', reason: err instanceof Error ? err.message : 'unknown failure' };
}
