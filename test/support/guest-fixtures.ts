import { randomBytes } from 'node:crypto';
import { ChatPlatformAppsRepository } from '../../src/directory/chat-platform-apps.repository';
import { ClientsRepository } from '../../src/directory/clients.repository';
import { TenantsRepository } from '../../src/directory/tenants.repository';
import { GuestClient } from '../../sdk/src/guest-client';
import { MemoryCookieJar } from '../../sdk/src/cookie-jar';
import { MemorySecureStorage, type SecureStorage } from '../../sdk/src/secure-storage';
import { FakeChatPlatform } from './fake-chat-platform';
import { startTestApp, type TestApp } from './test-app';

export interface GuestWorld {
  readonly t: TestApp;
  readonly chat: FakeChatPlatform;
  /**
   * A guest client of tenant `acme` with the `cli_game` client (openid offline_access); a native
   * game's when given its `storage`, and its `fetch` when the test stands between it and the service.
   */
  client(opts?: {
    tenantId?: string;
    clientId?: string;
    browserFlowId?: string;
    storage?: SecureStorage;
    /** The browser's cookies: another client with the same jar and storage is the page reloaded. */
    cookies?: MemoryCookieJar;
    fetch?: typeof fetch;
  }): GuestClient;
  close(): Promise<void>;
}

/**
 * Two tenants (`acme`, `beta`) with a browser client each allowed `openid offline_access`, a
 * native client of acme allowed nothing extra, a disabled client, an inactive tenant, and the
 * fake chat platform configured for acme.
 */
export async function startGuestWorld(overrides: Record<string, string> = {}): Promise<GuestWorld> {
  const chat = await FakeChatPlatform.start();
  const t = await startTestApp({
    CHAT_PLATFORM_AUTHORIZE_URL: chat.authorizeUrl,
    CHAT_PLATFORM_API_BASE: chat.apiBase,
    ...overrides,
  });
  const tenants = t.app.get(TenantsRepository);
  const clients = t.app.get(ClientsRepository);
  for (const [id, name] of [
    ['acme', 'Acme Games'],
    ['beta', 'Beta Studio'],
    ['gone', 'Gone Inc'],
  ] as const)
    await tenants.create(id, name, 'customer');
  await tenants.setStatus('gone', 'inactive');
  const client = (id: string, tenantId: string, type: 'browser' | 'native', scopes: string[], enabled = true) =>
    clients.insert({
      id,
      tenantId,
      name: id,
      type,
      enabled,
      scopes,
      redirectUris: [`https://play.${tenantId}.example/auth`],
      secretDigest: null,
    });
  await client('cli_game', 'acme', 'browser', ['openid', 'offline_access']);
  await client('cli_native', 'acme', 'native', []);
  await client('cli_off', 'acme', 'browser', ['openid'], false);
  await client('cli_beta', 'beta', 'browser', ['openid', 'offline_access']);
  await client('cli_gone', 'gone', 'browser', ['openid']);
  const redirectUri = `${t.authOrigin}/t/acme/chat/callback`;
  await t.app
    .get(ChatPlatformAppsRepository)
    .configure({ tenantId: 'acme', clientId: 'chat-app-1', clientSecret: 'chat-secret-1', redirectUri });
  chat.setApplication({ clientId: 'chat-app-1', clientSecret: 'chat-secret-1', redirectUri });
  return {
    t,
    chat,
    client: (opts = {}) =>
      new GuestClient({
        baseUrl: t.authOrigin,
        tenantId: opts.tenantId ?? 'acme',
        clientId: opts.clientId ?? 'cli_game',
        storage: opts.storage ?? new MemorySecureStorage(),
        cookies: opts.cookies ?? new MemoryCookieJar(),
        // A test drives every refresh itself: a timer rotating a token in the background would race it.
        autoRefresh: false,
        ...(opts.browserFlowId ? { browserFlowId: opts.browserFlowId } : {}),
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      }),
    async close() {
      await t.close();
      await chat.stop();
    },
  };
}

/** Email proof through the SDK, reading the code from the test SMTP server. */
export async function emailProof(w: GuestWorld, client: GuestClient, email: string): Promise<string> {
  const after = w.t.smtp.messages.length;
  await client.startEmail(email);
  const code = await w.t.smtp.waitForCode(email, { after });
  return (await client.verifyEmail(email, code)).proof_id;
}

/** `GET chat/start` with the guest's flow cookie: the platform URL it sends the browser to, and its state. */
export async function startChat(w: GuestWorld, c: GuestClient): Promise<{ to: URL; state: string }> {
  const url = new URL(c.chatStartUrl());
  const start = await w.t
    .auth()
    .get(url.pathname + url.search)
    .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
    .expect(302);
  const to = new URL(start.headers.location as string);
  return { to, state: to.searchParams.get('state') as string };
}

/** The browser's part of a chat-platform proof for `c`'s flow: start → platform → callback → the proof. */
export async function chatProof(
  w: GuestWorld,
  c: GuestClient,
  user: { id: string; username: string; email?: string },
): Promise<string> {
  const { to, state } = await startChat(w, c);
  const code = w.chat.registerUser({ global_name: null, verified: true, ...user }, to.toString());
  const back = await w.t
    .auth()
    .get('/t/acme/chat/callback')
    .query({ code, state })
    .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
    .expect(302);
  return GuestClient.chatRedirectResult(back.headers.location as string).proof_id;
}

/** A guest of `acme`'s `cli_game` made with a raw request in a fresh browser flow: its token set. */
export async function rawGuest(
  w: GuestWorld,
): Promise<{ refresh: string; access: string; sessionId: string; userId: string }> {
  const res = await w.t
    .auth()
    .post('/t/acme/guest')
    .send({ client_id: 'cli_game', browser_flow_id: `flw_${randomBytes(18).toString('base64url')}` })
    .expect(201);
  return {
    refresh: res.body.refresh_token,
    access: res.body.access_token,
    sessionId: res.body.session_id,
    userId: res.body.user_id,
  };
}

/**
 * `POST /t/acme/token` with a refresh token of `cli_game` (or of another tenant and client),
 * form-encoded as RFC 6749 has it.
 */
export const refreshGrant = (
  w: GuestWorld,
  token: string,
  { tenantId = 'acme', clientId = 'cli_game' }: { tenantId?: string; clientId?: string } = {},
) =>
  w.t
    .auth()
    .post(`/t/${tenantId}/token`)
    .type('form')
    .send({ grant_type: 'refresh_token', refresh_token: token, client_id: clientId });

/**
 * A browser client of `acme` registered on two sites, staging first: a callback returns a page's
 * flow to the redirect URI on that page's origin.
 */
export async function twoSiteClient(w: GuestWorld): Promise<{ clientId: string; staging: string; game: string }> {
  const [staging, game] = ['https://staging.two.example', 'https://game.two.example'] as const;
  await w.t.app.get(ClientsRepository).insert({
    id: 'cli_two_sites',
    tenantId: 'acme',
    name: 'Two sites',
    type: 'browser',
    enabled: true,
    scopes: ['openid'],
    redirectUris: [`${staging}/auth`, `${game}/auth`],
    secretDigest: null,
  });
  return { clientId: 'cli_two_sites', staging, game };
}
