import { Inject, Injectable, Logger } from '@nestjs/common';
import { AsyncLocalStorage } from 'node:async_hooks';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import {
  custom,
  errors,
  generators,
  Issuer,
  type BaseClient,
  type CustomHttpOptionsProvider,
  type TokenSet,
} from 'openid-client';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { DependencyUnavailableError } from '../errors/app-error';

/** The management scopes the console asks for: it reads and changes tenants (contract 15). */
const CONSOLE_SCOPE = 'tenant:read tenant:write';

export interface TokenGrant {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly sessionId: string;
  /** Lifetime the API stated, in seconds. */
  readonly expiresIn: number;
}

/**
 * How a grant ended. `rejected` means the API answered 400/401 (or a protocol check failed):
 * the grant will never work, so the console session must go (spec 3, 7.1). `unavailable` is
 * everything else: timeouts, refused connections, and any other status (403, 404, 408, 429, 5xx),
 * which a proxy, a load balancer or a rate limit in front of the API can answer while the grant
 * is fine. The session is kept (spec 3, contract section 10).
 */
export type GrantOutcome =
  | { readonly kind: 'granted'; readonly grant: TokenGrant }
  | { readonly kind: 'rejected'; readonly reason: string }
  | { readonly kind: 'unavailable'; readonly reason: string };

/** The methods of the management API's routes (contracts 5 and 15). */
export type ApiMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

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
 * AUTH_INTERNAL_URL (contract section 10): discovery, the token endpoint, revoke-session and the
 * resource calls all go there, with the auth host's name in `Host`, so host routing serves them
 * as calls to the auth host whatever address the BFF reaches the API at. The authorize URL stays
 * public: the browser goes there.
 */
@Injectable()
export class ConsoleApiClient {
  private readonly logger = new Logger('ConsoleApiClient');
  private client: Promise<BaseClient> | null = null;
  /** The console request a grant is made for: its X-Request-Id goes with the grant's calls. */
  private readonly grantRequestId = new AsyncLocalStorage<string | undefined>();
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
  async exchange(
    params: CallbackParams,
    checks: { state: string; codeVerifier: string },
    requestId: string | undefined,
  ): Promise<GrantOutcome> {
    return this.grant(requestId, async (client) =>
      client.oauthCallback(
        this.redirectUri,
        { ...params },
        { state: checks.state, code_verifier: checks.codeVerifier, response_type: 'code' },
      ),
    );
  }

  async refresh(refreshToken: string, requestId: string | undefined): Promise<GrantOutcome> {
    return this.grant(requestId, (client) => client.refresh(refreshToken));
  }

  /**
   * A request to the API with a bearer the server adds. The upstream request is built fresh:
   * only Authorization, Accept and X-Request-Id; never the browser's Cookie or Authorization.
   * Throws DependencyUnavailableError on transport failure (timeout, refused, reset).
   */
  async request(
    method: ApiMethod,
    path: string,
    accessToken: string,
    requestId: string | undefined,
    body?: unknown,
  ): Promise<UpstreamResponse> {
    const client = await this.discovered();
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (requestId) headers['X-Request-Id'] = requestId;
    // A JSON body the BFF has parsed and re-serialises: the API sees only what the browser sent.
    const json = body === undefined ? undefined : JSON.stringify(body);
    if (json !== undefined) headers['Content-Type'] = 'application/json';
    try {
      const res = await client.requestResource(`${this.config.authInternalUrl}${path}`, accessToken, {
        method,
        headers,
        ...(json === undefined ? {} : { body: json }),
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

  /**
   * `POST /management-auth/revoke-session` with the console client's credentials and the stored
   * session id (spec 2.2, 4.2): sign-out needs neither a fresh bearer nor a refresh. Resolves with
   * the status; throws DependencyUnavailableError on transport failure.
   */
  async revokeSession(sessionId: string, requestId: string | undefined): Promise<number> {
    const url = new URL('/management-auth/revoke-session', this.config.authInternalUrl);
    const body = JSON.stringify({ session_id: sessionId });
    const headers: Record<string, string> = {
      Host: new URL(this.config.authOrigin).host,
      Authorization: basicCredentials(this.config.consoleClientId, this.config.consoleClientSecret),
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(body)),
      Accept: 'application/json',
    };
    if (requestId) headers['X-Request-Id'] = requestId;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<number>((resolve, reject) => {
      const req = send(url, { method: 'POST', headers, timeout: this.config.dependencyTimeoutMs }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 502));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('revoke-session timed out')));
      req.on('error', reject);
      req.end(body);
    }).catch((err: unknown) => {
      throw new DependencyUnavailableError('console-api', err);
    });
  }

  private async grant(
    requestId: string | undefined,
    run: (client: BaseClient) => Promise<TokenSet>,
  ): Promise<GrantOutcome> {
    let tokens: TokenSet;
    try {
      const client = await this.discovered();
      tokens = await this.grantRequestId.run(requestId, () => run(client));
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
      // A 200 without the contract's token answer (a gateway's page, a cut-off body): contract
      // section 10 ends a session only on the token endpoint's 400 or 401, so this keeps it (503).
      return { kind: 'unavailable', reason: 'malformed token response' };
    }
    return {
      kind: 'granted',
      grant: { accessToken: access_token, refreshToken: refresh_token, sessionId: session_id, expiresIn: expires_in },
    };
  }

  private async discovered(): Promise<BaseClient> {
    this.client ??= this.discover();
    try {
      return await this.client;
    } catch (err) {
      // Forget the failed attempt so the next request discovers again.
      this.client = null;
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'API discovery failed');
      throw new DependencyUnavailableError('console-api', err);
    }
  }

  private async discover(): Promise<BaseClient> {
    const internal = new URL(this.config.authInternalUrl).origin;
    const authHost = new URL(this.config.authOrigin).host;
    // The grants carry the console request's id too, as the resource calls do (docs/operations.md, Logs).
    const toAuthHost: CustomHttpOptionsProvider = (url, options) => {
      if (url.origin !== internal) return options;
      const requestId = this.grantRequestId.getStore();
      const headers = { ...options.headers, host: authHost, ...(requestId ? { 'x-request-id': requestId } : {}) };
      return { ...options, headers };
    };
    // A subclass, so the hook applies to this discovery only and not to every Issuer in the process.
    const Discovering = class extends Issuer {};
    Discovering[custom.http_options] = toAuthHost;
    const discovered = await Discovering.discover(`${internal}/t/control-plane/.well-known/openid-configuration`);
    // The document names the public token endpoint; the BFF sends its grants to the internal one.
    const tokenEndpoint = discovered.metadata.token_endpoint?.replace(this.config.authOrigin, internal);
    const issuer = new Issuer({ ...discovered.metadata, token_endpoint: tokenEndpoint });
    const client = new issuer.Client({
      client_id: this.config.consoleClientId,
      client_secret: this.config.consoleClientSecret,
      redirect_uris: [this.redirectUri],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    client[custom.http_options] = toAuthHost;
    return client;
  }
}

/** RFC 6749 section 2.3.1: both halves form-URL-encoded before base64. */
function basicCredentials(id: string, secret: string): string {
  const encode = (v: string): string => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(id)}:${encode(secret)}`).toString('base64')}`;
}

function classify(err: unknown): GrantOutcome {
  if (err instanceof DependencyUnavailableError) return { kind: 'unavailable', reason: 'discovery failed' };
  // The status the token endpoint answered, when it answered at all.
  const status = (err as { response?: { statusCode?: number } } | null)?.response?.statusCode;
  if (status !== undefined) {
    // Spec 3 and 7.1, contract 10: only 400 (invalid_grant) and 401 (invalid_client) are final;
    // any other answer, a 200 openid-client could not read included, keeps the session.
    return status === 400 || status === 401
      ? { kind: 'rejected', reason: err instanceof errors.OPError ? (err.error ?? 'error') : `API answered ${status}` }
      : { kind: 'unavailable', reason: `API answered ${status}` };
  }
  // Without an answer: an error returned to the callback, or a failed protocol check of
  // openid-client on the callback's parameters (state, iss), is final; its own timeout is not.
  if (err instanceof errors.OPError) return { kind: 'rejected', reason: err.error ?? 'error' };
  if (err instanceof errors.RPError) {
    if (/timed out/.test(err.message)) return { kind: 'unavailable', reason: err.message };
    return { kind: 'rejected', reason: err.message };
  }
  return { kind: 'unavailable', reason: err instanceof Error ? err.message : 'unknown failure' };
}
