import type { CookieJar } from './cookie-jar.js';
import type { SecureStorage } from './secure-storage.js';

/**
 * A typed client of the guest API (contract sections 6 and 11) that runs unchanged in browsers
 * (fetch with `credentials: 'include'`, Web Crypto, no Node built-ins) and in Node or native
 * shells (an explicit cookie jar; refresh tokens only through a SecureStorage adapter).
 */

/** The token set of guest creation, sign-in, upgrade and refresh (the service's CustomerTokenSet). */
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
  /** The service's AUTH_ORIGIN, e.g. `https://auth.example`. */
  readonly baseUrl: string;
  readonly tenantId: string;
  readonly clientId: string;
  /** Where refresh tokens are kept; without it none is kept and `refresh()` cannot work. */
  readonly storage?: SecureStorage;
  /**
   * Outside a browser: the jar that keeps the flow cookie. In a browser leave it out: the browser
   * keeps the cookie (partitioned for a cross-site page) and sends it with `credentials: 'include'`.
   */
  readonly cookies?: CookieJar;
  /** Continue a flow (after a redirect or a reload); a new one is made otherwise. */
  readonly browserFlowId?: string;
  readonly fetch?: typeof fetch;
}

/** A fresh `flw_` id from Web Crypto: 18 random bytes, base64url (contract section 2). */
export function newBrowserFlowId(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(18));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `flw_${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/** The unverified payload of a JWT this client received over TLS from the service. */
function claimsOf(jwt: string): Record<string, unknown> {
  const part = jwt.split('.')[1] ?? '';
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(json, (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  } catch {
    return {};
  }
}

export class GuestClient {
  readonly browserFlowId: string;
  private session: { accessToken: string; sessionId: string; userId: string; guest: boolean } | null = null;

  constructor(private readonly opts: GuestClientOptions) {
    this.browserFlowId = opts.browserFlowId ?? newBrowserFlowId();
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

  /** The token's `guest` claim: true until the player attaches a credential or signs in. */
  get isGuest(): boolean | null {
    return this.session?.guest ?? null;
  }

  /** The flow cookie in the jar (Node and native shells; a browser never shows it to scripts). */
  flowCookie(): string | undefined {
    return this.opts.cookies?.get(`__Host-svc_flow_${this.browserFlowId}`);
  }

  async createGuest(): Promise<GuestCreated> {
    const created = await this.post<GuestCreated>('guest', this.flowBody());
    await this.keep(created);
    return created;
  }

  startEmail(email: string): Promise<{ expires_in: number }> {
    return this.post('email/start', { ...this.flowBody(), email });
  }

  verifyEmail(email: string, code: string): Promise<Proof> {
    return this.post('email/verify', { ...this.flowBody(), email, code });
  }

  /** The URL a top-level navigation opens to prove a chat-platform account (`GET chat/start`). */
  chatStartUrl(): string {
    const q = new URLSearchParams(this.flowBody());
    return `${this.opts.baseUrl}/t/${this.opts.tenantId}/chat/start?${q.toString()}`;
  }

  /**
   * The platform's authorize URL for a page that opens it in a popup or a redirect
   * (`POST chat/start`); the flow must be under way (after `createGuest`).
   */
  async chatAuthorizeUrl(): Promise<string> {
    return (await this.post<{ authorize_url: string }>('chat/start', this.flowBody())).authorize_url;
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
    await this.keep(upgraded);
    return upgraded;
  }

  async signIn(proofId: string): Promise<TokenSet & { user_id: string }> {
    const signedIn = await this.post<TokenSet & { user_id: string }>('sign-in', {
      ...this.flowBody(),
      proof_id: proofId,
    });
    await this.keep(signedIn);
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
      await this.keep(tokens);
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

  private async keep(tokens: TokenSet): Promise<void> {
    const claims = claimsOf(tokens.access_token);
    this.session = {
      accessToken: tokens.access_token,
      sessionId: tokens.session_id,
      userId: typeof claims.sub === 'string' ? claims.sub : '',
      guest: claims.guest === true,
    };
    if (tokens.refresh_token && this.opts.storage) await this.opts.storage.set(this.storageKey(), tokens.refresh_token);
  }

  private async post<T>(path: string, body: Record<string, string>, bearer = false): Promise<T> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (bearer && this.session) headers.Authorization = `Bearer ${this.session.accessToken}`;
    const jar = this.opts.cookies;
    const cookie = jar?.header();
    if (cookie !== undefined) headers.Cookie = cookie;
    const res = await (this.opts.fetch ?? globalThis.fetch)(`${this.opts.baseUrl}/t/${this.opts.tenantId}/${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      // A browser sends and keeps the flow cookie itself; with a jar, this client does.
      credentials: jar ? 'omit' : 'include',
    });
    if (jar) jar.store(res.headers.getSetCookie());
    const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (!res.ok) {
      const text = (v: unknown, fallback: string): string => (typeof v === 'string' ? v : fallback);
      throw new GuestApiError(res.status, text(json.error, 'unknown'), text(json.error_description, ''));
    }
    return json as T;
  }
}
