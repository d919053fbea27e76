import { Inject, Injectable } from '@nestjs/common';
import { custom, errors, generators, Issuer, type BaseClient } from 'openid-client';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { AppError, DependencyUnavailableError } from '../errors/app-error';
import type { ChatPlatformApp } from '../directory/chat-platform-apps.repository';

export interface ChatPlatformUser {
  readonly id: string;
  readonly username: string;
  readonly globalName: string | null;
  /** Only an address the platform marks verified. */
  readonly verifiedEmail: string | null;
}

/**
 * The Discord-compatible provider (contract section 1), a plain OAuth 2.0 server, through
 * openid-client as the OpenID Connect providers are: the authorization URL (code, PKCE S256,
 * state), the code exchange at `{base}/oauth2/token` (client_secret_basic, with the verifier), then
 * `{base}/users/@me`. Every call is bounded by DEPENDENCY_TIMEOUT_MS; an unreachable, slow or
 * failing platform is a 503 and no proof is issued.
 */
@Injectable()
export class ChatPlatformClient {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** `checks`: the state and the PKCE verifier the caller keeps with it, server-side. */
  authorizeUrl(app: ChatPlatformApp, checks: { state: string; codeVerifier: string }): string {
    // No `prompt=none` (issue 22, finding 2): the platform asks the player every time, so a link
    // someone else sent cannot carry a player who authorized the game before through unseen.
    // PKCE S256 (RFC 9700 section 2.1.1): the platform binds the code to the challenge, so only the
    // flow that asked for the code can exchange it, however the code itself travels.
    return this.client(app).authorizationUrl({
      scope: 'identify email',
      state: checks.state,
      code_challenge: generators.codeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  async userForCode(app: ChatPlatformApp, code: string, codeVerifier: string): Promise<ChatPlatformUser> {
    const client = this.client(app);
    // The state was checked and consumed by the caller before the platform is called at all; the
    // verifier is the one kept with that state, so a code issued for another state is refused.
    const tokens = await platformCall(() =>
      client.oauthCallback(app.redirectUri, { code }, { code_verifier: codeVerifier }),
    );
    if (typeof tokens.access_token !== 'string') throw new DependencyUnavailableError('chat_platform');
    const res = await platformCall(() =>
      client.requestResource(`${this.config.chatPlatform.apiBase}/users/@me`, tokens.access_token as string),
    );
    if (res.statusCode === 400 || res.statusCode === 401)
      throw new AppError('invalid_request', 'The chat platform refused the authorization.');
    if (res.statusCode !== 200) throw new DependencyUnavailableError('chat_platform');
    let user: Record<string, unknown>;
    try {
      user = JSON.parse(res.body?.toString('utf8') ?? '') as Record<string, unknown>;
    } catch (err) {
      throw new DependencyUnavailableError('chat_platform', err);
    }
    if (typeof user.id !== 'string' || !/^\d{1,32}$/.test(user.id) || typeof user.username !== 'string')
      throw new DependencyUnavailableError('chat_platform');
    return {
      id: user.id,
      username: user.username,
      globalName: typeof user.global_name === 'string' ? user.global_name : null,
      verifiedEmail: user.verified === true && typeof user.email === 'string' ? user.email.toLowerCase() : null,
    };
  }

  private client(app: ChatPlatformApp): BaseClient {
    const timeout = (): { timeout: number } => ({ timeout: this.config.dependencyTimeoutMs });
    const issuer = new Issuer({
      issuer: 'chat-platform',
      authorization_endpoint: this.config.chatPlatform.authorizeUrl,
      token_endpoint: `${this.config.chatPlatform.apiBase}/oauth2/token`,
    });
    issuer[custom.http_options] = (_url, options) => ({ ...options, ...timeout() });
    const client = new issuer.Client({
      client_id: app.clientId,
      client_secret: app.clientSecret,
      redirect_uris: [app.redirectUri],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    client[custom.http_options] = (_url, options) => ({ ...options, ...timeout() });
    return client;
  }
}

/**
 * A refused code (400/401) is the caller's problem; anything else (unreachable, too slow, 5xx,
 * an answer that is not OAuth) is the platform's: 503, and no proof.
 */
async function platformCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    const status = err instanceof errors.OPError ? err.response?.statusCode : undefined;
    if (status === 400 || status === 401)
      throw new AppError('invalid_request', 'The chat platform refused the authorization.');
    throw new DependencyUnavailableError('chat_platform', err);
  }
}
