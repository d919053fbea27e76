import { IdentityEmailDigest } from '../../../src/directory/identity-email-digest';
import { GuestApiError, GuestClient } from '../../../sdk/src/guest-client';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

describe('chat-platform proofs and upgrade (Discord-compatible provider over HTTP)', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off', DEPENDENCY_TIMEOUT_MS: '800' });
  });
  afterAll(async () => {
    await w.close();
  });

  const cookieOf = (c: GuestClient) => `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`;

  /** Runs the browser's part: start → platform (fake) → callback; returns the callback answer. */
  async function chatRound(
    c: GuestClient,
    user: { id: string; username: string; email?: string | null; verified?: boolean },
    extra: Record<string, string> = {},
  ) {
    const start = await w.t
      .auth()
      .get(new URL(c.chatStartUrl()).pathname + new URL(c.chatStartUrl()).search)
      .set('Cookie', cookieOf(c))
      .expect(302);
    const to = new URL(start.headers.location as string);
    expect(`${to.origin}${to.pathname}`).toBe(w.chat.authorizeUrl);
    expect(to.searchParams.get('client_id')).toBe('chat-app-1');
    expect(to.searchParams.get('redirect_uri')).toBe(`${w.t.authOrigin}/t/acme/chat/callback`);
    // The platform asks the player every time (issue 22, finding 2).
    expect(to.searchParams.has('prompt')).toBe(false);
    const state = to.searchParams.get('state') as string;
    const code = w.chat.registerUser({ global_name: null, ...user });
    return w.t
      .auth()
      .get('/t/acme/chat/callback')
      .query({ code, state, ...extra })
      .set('Cookie', cookieOf(c));
  }

  const emailDigestOf = async (subject: string): Promise<string | null> =>
    (
      await w.t.pg.query(
        `SELECT email_digest FROM identities WHERE provider = 'chat_platform' AND provider_subject = $1`,
        [subject],
      )
    ).rows[0].email_digest as string | null;
  const verifiedChat = (email: string) => ({
    tenantId: 'acme',
    provider: 'chat_platform',
    providerSubject: 'any',
    email,
    emailVerified: true,
  });

  it('upgrades a guest with a chat-platform account read from the user API', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const callback = await chatRound(c, {
      id: '80351110224678912',
      username: 'nelly',
      email: 'nelly@example.com',
      verified: true,
    });
    expect(callback.status).toBe(302);
    const back = new URL(callback.headers.location as string);
    expect(`${back.origin}${back.pathname}`).toBe('https://play.acme.example/auth');
    expect(back.searchParams.get('expires_in')).toBe('300');
    expect(callback.headers['cache-control']).toBe('no-store');
    const upgraded = await c.upgrade(GuestClient.chatRedirectResult(back.toString()).proof_id);
    expect(upgraded).toMatchObject({
      user_id: created.user_id,
      linked_identity: { provider: 'chat_platform', provider_subject: '80351110224678912', email: 'nelly@example.com' },
    });
    expect(w.chat.userRequests).toBeGreaterThan(0);
    const row = await w.t.pg.query(
      `SELECT user_id, metadata FROM identities WHERE provider = 'chat_platform' AND provider_subject = '80351110224678912'`,
    );
    expect(row.rows).toEqual([{ user_id: created.user_id, metadata: { username: 'nelly', global_name: null } }]);
    // The verified address is found by its digest (issue 26).
    expect(await emailDigestOf('80351110224678912')).toBe(
      w.t.app.get(IdentityEmailDigest).of(verifiedChat('nelly@example.com')),
    );
  });

  it('keeps an unverified platform email out of the identity', async () => {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    const callback = await chatRound(c, {
      id: '111',
      username: 'unverified',
      email: 'unverified@example.com',
      verified: false,
    });
    const upgraded = await c.upgrade(
      new URL(callback.headers.location as string).searchParams.get('proof_id') as string,
    );
    expect(upgraded.linked_identity.email).toBeNull();
    expect(await emailDigestOf('111')).toBeNull();
  });

  it('refuses a replayed or foreign state; a callback without the flow cookie goes back to the game with access_denied', async () => {
    const c = w.client();
    await c.createGuest();
    const start = await w.t
      .auth()
      .get(new URL(c.chatStartUrl()).pathname + new URL(c.chatStartUrl()).search)
      .set('Cookie', cookieOf(c))
      .expect(302);
    const state = new URL(start.headers.location as string).searchParams.get('state') as string;
    const code = w.chat.registerUser({ id: '222', username: 'x' });
    const noCookie = await w.t.auth().get('/t/acme/chat/callback').query({ code, state }).expect(302);
    expect(new URL(noCookie.headers.location as string).toString()).toBe(
      'https://play.acme.example/auth?error=access_denied',
    );
    // The state was consumed by that attempt.
    await w.t.auth().get('/t/acme/chat/callback').query({ code, state }).set('Cookie', cookieOf(c)).expect(400);
    await w.t
      .auth()
      .get('/t/acme/chat/callback')
      .query({ code, state: 'made-up' })
      .set('Cookie', cookieOf(c))
      .expect(400);
  });

  it('a chat account already linked elsewhere: 409 identity_in_use at upgrade, explicit sign-in to its owner instead', async () => {
    const owner = w.client();
    await owner.createGuest();
    await owner.createLinkingIntent();
    const first = await chatRound(owner, { id: '4440001', username: 'taken' });
    await owner.upgrade(GuestClient.chatRedirectResult(first.headers.location as string).proof_id);

    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    const second = await chatRound(c, { id: '4440001', username: 'taken' });
    const proof = GuestClient.chatRedirectResult(second.headers.location as string).proof_id;
    await expect(c.upgrade(proof)).rejects.toMatchObject({ status: 409, code: 'identity_in_use' });
    const third = await chatRound(c, { id: '4440001', username: 'taken' });
    const signedIn = await c.signIn(GuestClient.chatRedirectResult(third.headers.location as string).proof_id);
    expect(signedIn.user_id).toBe(owner.userId);
    const rows = await w.t.pg.query(
      `SELECT user_id FROM identities WHERE provider = 'chat_platform' AND provider_subject = '4440001'`,
    );
    expect(rows.rows).toEqual([{ user_id: owner.userId }]);
  });

  it('a declined consent returns the player to the game with error=access_denied, and spends the state', async () => {
    const c = w.client();
    await c.createGuest();
    const url = new URL(c.chatStartUrl());
    const start = await w.t
      .auth()
      .get(url.pathname + url.search)
      .set('Cookie', cookieOf(c))
      .expect(302);
    const state = new URL(start.headers.location as string).searchParams.get('state') as string;
    const tokenCalls = w.chat.tokenRequests;
    const declined = await w.t
      .auth()
      .get('/t/acme/chat/callback')
      .query({ error: 'access_denied', error_description: 'The resource owner denied the request', state })
      .set('Cookie', cookieOf(c))
      .expect(302);
    const back = new URL(declined.headers.location as string);
    expect(`${back.origin}${back.pathname}`).toBe('https://play.acme.example/auth');
    expect([...back.searchParams.entries()]).toEqual([['error', 'access_denied']]);
    expect(() => GuestClient.chatRedirectResult(back.toString())).toThrow(
      expect.objectContaining({ code: 'access_denied' }),
    );
    expect(w.chat.tokenRequests).toBe(tokenCalls);
    // The state is spent; an invented provider error is not reflected back.
    await w.t
      .auth()
      .get('/t/acme/chat/callback')
      .query({ code: w.chat.registerUser({ id: '555', username: 'late' }), state })
      .set('Cookie', cookieOf(c))
      .expect(400);
    const start2 = await w.t
      .auth()
      .get(url.pathname + url.search)
      .set('Cookie', cookieOf(c))
      .expect(302);
    const state2 = new URL(start2.headers.location as string).searchParams.get('state') as string;
    const odd = await w.t
      .auth()
      .get('/t/acme/chat/callback')
      .query({ error: '<script>', state: state2 })
      .set('Cookie', cookieOf(c))
      .expect(302);
    expect(new URL(odd.headers.location as string).searchParams.get('error')).toBe('server_error');
  });

  it('returns the player to the game with temporarily_unavailable and no proof when the platform fails or hangs, within the dependency timeout', async () => {
    for (const mode of ['error500', 'hang'] as const) {
      const c = w.client();
      await c.createGuest();
      w.chat.setMode(mode);
      try {
        const started = Date.now();
        const callback = await chatRound(c, { id: '333', username: 'down' });
        expect({ mode, status: callback.status, location: callback.headers.location }).toEqual({
          mode,
          status: 302,
          location: 'https://play.acme.example/auth?error=temporarily_unavailable',
        });
        expect(Date.now() - started).toBeLessThan(4000);
      } finally {
        w.chat.setMode('normal');
      }
    }
    const rows = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE provider_subject = '333'`);
    expect(rows.rows[0].n).toBe(0);
  });

  it('accepts the standard extra parameters iss and error_uri, and reflects none of them', async () => {
    const c = w.client();
    await c.createGuest();
    const withIss = await chatRound(c, { id: '7770001', username: 'iss' }, { iss: 'https://discord.com' });
    const back = new URL(withIss.headers.location as string);
    expect([...back.searchParams.keys()]).toEqual(['proof_id', 'expires_in']);
    const url = new URL(c.chatStartUrl());
    const start = await w.t
      .auth()
      .get(url.pathname + url.search)
      .set('Cookie', cookieOf(c))
      .expect(302);
    const state = new URL(start.headers.location as string).searchParams.get('state') as string;
    const failed = await w.t
      .auth()
      .get('/t/acme/chat/callback')
      .query({
        error: 'temporarily_unavailable',
        error_description: 'try later',
        error_uri: 'https://discord.com/developers/docs',
        iss: 'https://discord.com',
        state,
      })
      .set('Cookie', cookieOf(c))
      .expect(302);
    expect(failed.headers.location).toBe('https://play.acme.example/auth?error=server_error');
  });

  it('a start without a configured platform answers 404, and a tenant’s client is required', async () => {
    const beta = w.client({ tenantId: 'beta', clientId: 'cli_beta' });
    await beta.createGuest();
    const url = new URL(beta.chatStartUrl());
    await w.t
      .auth()
      .get(url.pathname + url.search)
      .set('Cookie', `__Host-svc_flow_${beta.browserFlowId}=${beta.flowCookie()}`)
      .expect(404);
    const err = await w
      .client({ clientId: 'cli_beta' })
      .createGuest()
      .catch((e: GuestApiError) => e);
    expect(err).toMatchObject({ status: 400, code: 'invalid_client' });
  });
});
