import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A platform account as `GET /users/@me` describes it. */
export interface ChatUser {
  readonly id: string;
  readonly username: string;
  readonly global_name?: string | null;
  readonly email?: string | null;
  /** Whether the platform verified the email; defaults to true when an email is given. */
  readonly verified?: boolean;
}

/** The OAuth application the service is configured with (admin CLI `chat configure`). */
export interface ChatApplication {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
}

/** A code as the platform issued it: the user it signs in as, and the PKCE challenge it is bound to. */
interface IssuedCode {
  readonly user: ChatUser;
  readonly codeChallenge: string | null;
}

/** `hang` never answers token or user requests; `error500` answers them with 500. */
export type ChatPlatformMode = 'normal' | 'hang' | 'error500';

const MAX_BODY = 64 * 1024;
const SESSION_COOKIE = 'fake_chat_session';

/**
 * A Discord-compatible OAuth 2.0 provider over real HTTP for tests (contract section 1):
 * `POST {apiBase}/oauth2/token` (authorization_code grant) and `GET {apiBase}/users/@me`.
 * As Discord (its metadata lists `code_challenge_methods_supported: ["S256"]`), a code is bound to
 * the PKCE challenge of the authorize request that got it: the token request must carry the
 * matching verifier, and one for a code that had no challenge must carry none (RFC 9700 section
 * 4.8.2). Tests that skip the browser use `registerUser`, which hands out the code the platform
 * would have put on the redirect of the authorize URL they pass, and call the service's callback
 * with it. In a browser, `browserSession` signs a player in to the platform (a cookie of the
 * platform's origin); its authorize page then offers an `#approve` link that redirects to the
 * callback with a code bound to the page's challenge, and with `prompt=none` a player who
 * authorized the application before is sent back at once, as Discord does.
 */
export class FakeChatPlatform {
  readonly apiBase: string;
  readonly authorizeUrl: string;
  /** Query of the most recent `GET /oauth2/authorize` (empty until one arrives). */
  lastAuthorizeQuery = new URLSearchParams();
  tokenRequests = 0;
  userRequests = 0;

  private mode: ChatPlatformMode = 'normal';
  private application: ChatApplication | null = null;
  private readonly codes = new Map<string, IssuedCode>();
  private readonly tokens = new Map<string, ChatUser>();
  private readonly sockets = new Set<Socket>();
  /** Platform sign-in cookies of browsers, and the users that authorized the application. */
  private readonly sessions = new Map<string, ChatUser>();
  private readonly authorized = new Set<string>();
  private readonly consents = new Map<string, IssuedCode & { redirectUri: string; state: string }>();

  private constructor(
    private readonly server: Server,
    port: number,
  ) {
    const origin = `http://127.0.0.1:${port}`;
    this.apiBase = `${origin}/api/v10`;
    this.authorizeUrl = `${origin}/oauth2/authorize`;
  }

  static async start(): Promise<FakeChatPlatform> {
    const ref: { platform?: FakeChatPlatform } = {};
    const server = createServer((req, res) => {
      ref.platform?.handle(req, res).catch(() => {
        if (!res.headersSent) json(res, 500, { message: '500: Internal Server Error', code: 0 });
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const platform = new FakeChatPlatform(server, (server.address() as AddressInfo).port);
    ref.platform = platform;
    // Tracked so stop() can cut connections that `hang` left open.
    server.on('connection', (socket: Socket) => {
      platform.sockets.add(socket);
      socket.once('close', () => platform.sockets.delete(socket));
    });
    return platform;
  }

  setApplication(app: ChatApplication): void {
    this.application = { ...app };
  }

  setMode(mode: ChatPlatformMode): void {
    this.mode = mode;
  }

  /**
   * A fresh one-time authorization code that signs in as `user`, issued on the consent to
   * `authorizeUrl` (the platform URL the service sent the browser to): bound to its PKCE challenge,
   * or to none when it has none or is not given.
   */
  registerUser(user: ChatUser, authorizeUrl?: string): string {
    const pkce =
      authorizeUrl === undefined ? { codeChallenge: null } : pkceChallenge(new URL(authorizeUrl).searchParams);
    if (!pkce) throw new Error('the authorize URL asks for PKCE other than S256');
    return this.issueCode(user, pkce.codeChallenge);
  }

  /**
   * A cookie that signs a browser in to the platform as `user` (add it to a browser context);
   * `authorized` says the player authorized the application before.
   */
  browserSession(user: ChatUser, opts: { authorized?: boolean } = {}): { name: string; value: string; url: string } {
    const value = randomBytes(16).toString('base64url');
    this.sessions.set(value, { ...user });
    if (opts.authorized) this.authorized.add(user.id);
    return { name: SESSION_COOKIE, value, url: new URL(this.authorizeUrl).origin };
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = `${req.method ?? ''} ${url.pathname}`;
    switch (route) {
      case 'GET /oauth2/authorize':
        this.lastAuthorizeQuery = url.searchParams;
        return this.authorizePage(req, res, url.searchParams);
      case 'GET /oauth2/authorize/approve':
        return this.approve(res, url.searchParams.get('ticket') ?? '');
      case 'POST /api/v10/oauth2/token':
        this.tokenRequests++;
        if (this.faulted(res)) return;
        return this.token(req, res);
      case 'GET /api/v10/users/@me':
        this.userRequests++;
        if (this.faulted(res)) return;
        return this.me(req, res);
      default:
        json(res, 404, { message: '404: Not Found', code: 0 });
    }
  }

  /**
   * The consent page. A signed-in player gets an `#approve` link; with `prompt=none` a player who
   * authorized the application before goes straight back with a code, one who did not with
   * `error=consent_required`.
   */
  private authorizePage(req: IncomingMessage, res: ServerResponse, q: URLSearchParams): void {
    const redirectUri = q.get('redirect_uri') ?? '';
    const state = q.get('state') ?? '';
    if (!this.application || redirectUri !== this.application.redirectUri) {
      res.writeHead(400, { 'Content-Type': 'text/plain' });
      res.end('invalid redirect_uri');
      return;
    }
    const pkce = pkceChallenge(q);
    if (!pkce) {
      // Discord supports S256 only; the error goes back to the client, as RFC 7636 section 4.4.1 says.
      const back = new URL(redirectUri);
      back.searchParams.set('error', 'invalid_request');
      back.searchParams.set('state', state);
      res.writeHead(302, { Location: back.toString() });
      res.end();
      return;
    }
    const session = /(?:^|;\s*)fake_chat_session=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? '')?.[1];
    const user = session ? this.sessions.get(session) : undefined;
    if (q.get('prompt') === 'none') {
      const back = new URL(redirectUri);
      if (user && this.authorized.has(user.id)) back.searchParams.set('code', this.issueCode(user, pkce.codeChallenge));
      else back.searchParams.set('error', 'consent_required');
      back.searchParams.set('state', state);
      res.writeHead(302, { Location: back.toString() });
      res.end();
      return;
    }
    const ticket = randomBytes(16).toString('base64url');
    if (user) this.consents.set(ticket, { user, redirectUri, state, codeChallenge: pkce.codeChallenge });
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(
      '<!doctype html><title>Authorize</title><p>Fake chat platform: authorize this application?</p>' +
        (user ? `<a id="approve" href="/oauth2/authorize/approve?ticket=${ticket}">Authorize</a>` : ''),
    );
  }

  private approve(res: ServerResponse, ticket: string): void {
    const consent = this.consents.get(ticket);
    this.consents.delete(ticket);
    if (!consent) return json(res, 400, { message: 'unknown consent', code: 0 });
    this.authorized.add(consent.user.id);
    const back = new URL(consent.redirectUri);
    back.searchParams.set('code', this.issueCode(consent.user, consent.codeChallenge));
    back.searchParams.set('state', consent.state);
    res.writeHead(302, { Location: back.toString() });
    res.end();
  }

  private issueCode(user: ChatUser, codeChallenge: string | null): string {
    const code = randomBytes(22).toString('base64url');
    this.codes.set(code, { user: { ...user }, codeChallenge });
    return code;
  }

  /** Applies the fault mode; true when the request must get no normal answer. */
  private faulted(res: ServerResponse): boolean {
    if (this.mode === 'hang') return true; // never answered; the socket stays open until stop()
    if (this.mode === 'error500') {
      json(res, 500, { message: '500: Internal Server Error', code: 0 });
      return true;
    }
    return false;
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) {
      return json(res, 400, { error: 'invalid_request', error_description: 'expected a form-encoded body' });
    }
    const form = new URLSearchParams(body);
    const client = basicCredentials(req.headers.authorization) ?? {
      id: form.get('client_id') ?? '',
      secret: form.get('client_secret') ?? '',
    };
    const app = this.application;
    if (!app || client.id !== app.clientId || client.secret !== app.clientSecret) {
      return json(res, 401, { error: 'invalid_client' });
    }
    if (form.get('grant_type') !== 'authorization_code') {
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    const code = form.get('code') ?? '';
    const issued = this.codes.get(code);
    // A presented code is spent even when the rest of the request is wrong, as real providers do.
    this.codes.delete(code);
    if (
      !issued ||
      form.get('redirect_uri') !== app.redirectUri ||
      !verifierMatches(issued, form.get('code_verifier'))
    ) {
      return json(res, 400, { error: 'invalid_grant' });
    }
    const user = issued.user;
    const accessToken = randomBytes(22).toString('base64url');
    this.tokens.set(accessToken, user);
    json(res, 200, {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: 604800,
      refresh_token: randomBytes(22).toString('base64url'),
      scope: 'identify email',
    });
  }

  private me(req: IncomingMessage, res: ServerResponse): void {
    const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const user = match ? this.tokens.get(match[1] ?? '') : undefined;
    if (!user) return json(res, 401, { message: '401: Unauthorized', code: 0 });
    const email = user.email ?? null;
    json(res, 200, {
      id: user.id,
      username: user.username,
      global_name: user.global_name ?? null,
      email,
      verified: user.verified ?? email !== null,
    });
  }
}

/**
 * The PKCE challenge of an authorize request (`codeChallenge` null without one); null for a
 * challenge without `code_challenge_method=S256` (RFC 7636's default is `plain`, which Discord
 * does not offer).
 */
function pkceChallenge(q: URLSearchParams): { readonly codeChallenge: string | null } | null {
  const challenge = q.get('code_challenge');
  if (challenge === null) return { codeChallenge: null };
  const s256 = q.get('code_challenge_method') === 'S256' && /^[A-Za-z0-9_-]{43}$/.test(challenge);
  return s256 ? { codeChallenge: challenge } : null;
}

/**
 * RFC 7636 section 4.6: the verifier (43–128 unreserved characters) hashes to the code's
 * challenge; a code issued without a challenge takes no verifier (RFC 9700 section 4.8.2, the
 * downgrade a client could otherwise not notice).
 */
function verifierMatches(issued: IssuedCode, verifier: string | null): boolean {
  if (issued.codeChallenge === null) return verifier === null;
  if (verifier === null || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  return createHash('sha256').update(verifier).digest('base64url') === issued.codeChallenge;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Client credentials from `Authorization: Basic`, form-decoded as RFC 6749 section 2.3.1 asks. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { id: '', secret: '' };
  const formDecode = (s: string): string => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return '';
    }
  };
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}
