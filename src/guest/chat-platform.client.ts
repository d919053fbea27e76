import { Inject, Injectable } from '@nestjs/common';
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
 * The Discord-compatible provider (contract section 1): code exchange at `{base}/oauth2/token`,
 * then `{base}/users/@me`. Every call is bounded by DEPENDENCY_TIMEOUT_MS; an unreachable,
 * slow or failing platform is a 503 and no proof is issued.
 */
@Injectable()
export class ChatPlatformClient {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  authorizeUrl(app: ChatPlatformApp, state: string): string {
    const url = new URL(this.config.chatPlatform.authorizeUrl);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', app.clientId);
    url.searchParams.set('redirect_uri', app.redirectUri);
    url.searchParams.set('scope', 'identify email');
    url.searchParams.set('state', state);
    // No `prompt=none` (issue 22, finding 2): the platform asks the player every time, so a link
    // someone else sent cannot carry a player who authorized the game before through unseen.
    return url.toString();
  }

  async userForCode(app: ChatPlatformApp, code: string): Promise<ChatPlatformUser> {
    const base = this.config.chatPlatform.apiBase;
    const token = await this.call(`${base}/oauth2/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.clientSecret)}`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: app.redirectUri }).toString(),
    });
    const accessToken = (token as { access_token?: unknown }).access_token;
    if (typeof accessToken !== 'string') throw new DependencyUnavailableError('chat_platform');
    const user = (await this.call(`${base}/users/@me`, {
      headers: { Authorization: `Bearer ${accessToken}` },
    })) as Record<string, unknown>;
    if (typeof user.id !== 'string' || !/^\d{1,32}$/.test(user.id) || typeof user.username !== 'string')
      throw new DependencyUnavailableError('chat_platform');
    return {
      id: user.id,
      username: user.username,
      globalName: typeof user.global_name === 'string' ? user.global_name : null,
      verifiedEmail: user.verified === true && typeof user.email === 'string' ? user.email.toLowerCase() : null,
    };
  }

  private async call(url: string, init: RequestInit): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(url, { ...init, signal: AbortSignal.timeout(this.config.dependencyTimeoutMs) });
    } catch (err) {
      throw new DependencyUnavailableError('chat_platform', err);
    }
    // A refused code (400/401) is the caller's problem; anything else is the platform's.
    if (res.status === 400 || res.status === 401)
      throw new AppError('invalid_request', 'The chat platform refused the authorization.');
    if (!res.ok) throw new DependencyUnavailableError('chat_platform');
    try {
      return await res.json();
    } catch (err) {
      throw new DependencyUnavailableError('chat_platform', err);
    }
  }
}
