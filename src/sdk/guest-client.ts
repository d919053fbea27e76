import { randomBytes } from 'node:crypto';
import type { SecureStorage } from './secure-storage';

/** A typed client of the guest API (contract section 6), for games and apps. */

export interface TokenSet {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token?: string;
  readonly id_token?: string;
  readonly scope: string;
  readonly session_id: string;
}

export interface GuestCreated extends TokenSet {
  readonly user_id: string;
  readonly upgrade_proof: { readonly proof_id: string; readonly expires_in: number };
}

export interface Proof {
  readonly proof_id: string;
  readonly expires_in: number;
}

export interface Upgraded extends TokenSet {
  readonly user_id: string;
  readonly linked_identity: {
    readonly provider: 'email' | 'chat_platform';
    readonly provider_subject: string;
    readonly email: string | null;
  };
}

export class GuestApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly description: string,
  ) {
    super(`${status} ${code}: ${description}`);
    this.name = 'GuestApiError';
  }
}

export interface GuestClientOptions {
  /** The service's AUTH_ORIGIN. */
  readonly baseUrl: string;
  readonly tenantId: string;
  readonly clientId: string;
  /** Required to keep refresh tokens (native clients with offline_access). */
  readonly storage?: SecureStorage;
  /** Reuse a browser flow; a new one is made otherwise. */
  readonly browserFlowId?: string;
  readonly fetch?: typeof fetch;
}

export class GuestClient {
  readonly browserFlowId: string;
  private readonly cookies = new Map<string, string>();
  private session: { accessToken: string; sessionId: string; userId: string } | null = null;

  constructor(private readonly opts: GuestClientOptions) {
    this.browserFlowId = opts.browserFlowId ?? `flw_${randomBytes(18).toString('base64url')}`;
  }

  get accessToken(): string | null {
    return this.session?.accessToken ?? null;
  }

  get userId(): string | null {
    return this.session?.userId ?? null;
  }

  get sessionId(): string | null {
    return this.session?.sessionId ?? null;
  }

  /** The flow cookie this client holds, as a browser would (for tests and diagnostics). */
  flowCookie(): string | undefined {
    return this.cookies.get(`__Host-svc_flow_${this.browserFlowId}`);
  }

  async createGuest(): Promise<GuestCreated> {
    const created = await this.post<GuestCreated>('guest', this.flowBody());
    await this.keep(created.user_id, created);
    return created;
  }

  startEmail(email: string): Promise<{ expires_in: number }> {
    return this.post('email/start', { ...this.flowBody(), email });
  }

  verifyEmail(email: string, code: string): Promise<Proof> {
    return this.post('email/verify', { ...this.flowBody(), email, code });
  }

  /** The URL a browser opens to prove a chat-platform account. */
  chatStartUrl(): string {
    const q = new URLSearchParams(this.flowBody());
    return `${this.opts.baseUrl}/t/${this.opts.tenantId}/chat/start?${q.toString()}`;
  }

  /**
   * Reads the chat-platform callback's redirect to the game's registered URI: the provider proof,
   * or a GuestApiError (status 0) with `access_denied` when the player declined.
   */
  static chatRedirectResult(redirectedTo: string): Proof {
    const q = new URL(redirectedTo).searchParams;
    const proofId = q.get('proof_id');
    const expiresIn = Number(q.get('expires_in'));
    if (proofId && Number.isInteger(expiresIn) && expiresIn > 0) return { proof_id: proofId, expires_in: expiresIn };
    throw new GuestApiError(
      0,
      q.get('error') ?? 'invalid_redirect',
      'The chat platform sign-in did not produce a proof.',
    );
  }

  createLinkingIntent(opts: { upgradeProofId?: string } = {}): Promise<{ intent_id: string; expires_in: number }> {
    return this.post(
      'guest/linking-intent',
      { ...this.flowBody(), ...(opts.upgradeProofId ? { upgrade_proof_id: opts.upgradeProofId } : {}) },
      true,
    );
  }

  async upgrade(proofId: string): Promise<Upgraded> {
    const upgraded = await this.post<Upgraded>('guest/upgrade', { ...this.flowBody(), proof_id: proofId }, true);
    await this.keep(upgraded.user_id, upgraded);
    return upgraded;
  }

  async signIn(proofId: string): Promise<TokenSet & { user_id: string }> {
    const signedIn = await this.post<TokenSet & { user_id: string }>('sign-in', {
      ...this.flowBody(),
      proof_id: proofId,
    });
    await this.keep(signedIn.user_id, signedIn);
    return signedIn;
  }

  /**
   * Rotates the stored refresh token; the old one is spent. `invalid_grant` means the session is
   * over (revoked, replayed, expired), so the dead token is dropped from storage.
   */
  async refresh(): Promise<TokenSet> {
    const refreshToken = await this.opts.storage?.get(this.storageKey());
    if (!refreshToken) throw new GuestApiError(0, 'no_refresh_token', 'No refresh token in secure storage.');
    try {
      const tokens = await this.post<TokenSet>('token', {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: this.opts.clientId,
      });
      await this.keep(this.session?.userId ?? '', tokens);
      return tokens;
    } catch (err) {
      if (err instanceof GuestApiError && err.code === 'invalid_grant') {
        await this.opts.storage?.delete(this.storageKey());
        this.session = null;
      }
      throw err;
    }
  }

  async revoke(): Promise<void> {
    const refreshToken = await this.opts.storage?.get(this.storageKey());
    const token = refreshToken ?? this.session?.accessToken;
    if (token) await this.post('revoke', { token, client_id: this.opts.clientId });
    await this.opts.storage?.delete(this.storageKey());
    this.session = null;
  }

  private flowBody(): { client_id: string; browser_flow_id: string } {
    return { client_id: this.opts.clientId, browser_flow_id: this.browserFlowId };
  }

  private storageKey(): string {
    return `svc-auth:${this.opts.tenantId}:${this.opts.clientId}:refresh_token`;
  }

  private async keep(userId: string, tokens: TokenSet): Promise<void> {
    this.session = { accessToken: tokens.access_token, sessionId: tokens.session_id, userId };
    if (tokens.refresh_token && this.opts.storage) await this.opts.storage.set(this.storageKey(), tokens.refresh_token);
  }

  private async post<T>(path: string, body: Record<string, string>, bearer = false): Promise<T> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (bearer && this.session) headers.Authorization = `Bearer ${this.session.accessToken}`;
    if (this.cookies.size > 0) headers.Cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await (this.opts.fetch ?? fetch)(`${this.opts.baseUrl}/t/${this.opts.tenantId}/${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (pair && eq > 0) this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) {
      const text = (v: unknown, fallback: string): string => (typeof v === 'string' ? v : fallback);
      throw new GuestApiError(res.status, text(json.error, 'unknown'), text(json.error_description, ''));
    }
    return json as T;
  }
}
