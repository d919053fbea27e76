import { createHash } from 'node:crypto';
import { IdentityEmailDigest } from '../../../src/directory/identity-email-digest';
import { sha256 } from '../../../src/platform/crypto/digests';
import { GuestApiError, GuestClient } from '../../../sdk/src/guest-client';
import { startChat, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

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
    const { to, state } = await startChat(w, c);
    expect(`${to.origin}${to.pathname}`).toBe(w.chat.authorizeUrl);
    expect(to.searchParams.get('client_id')).toBe('chat-app-1');
    expect(to.searchParams.get('redirect_uri')).toBe(`${w.t.authOrigin}/t/acme/chat/callback`);
    // The platform asks the player every time (issue 22, finding 2).
    expect(to.searchParams.has('prompt')).toBe(false);
    // PKCE S256: the platform binds the code to the challenge of the URL the player consented on.
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    const code = w.chat.registerUser({ global_name: null, ...user }, to.toString());
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
    const { state } = await startChat(w, c);
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

  it('refuses a state written without a PKCE verifier (before this release) as unknown, before any exchange', async () => {
    const c = w.client();
    await c.createGuest();
    const { to, state } = await startChat(w, c);
    // The record as the previous release wrote it: the same fields, no `codeVerifier`.
    const key = `gcs:{${sha256(state)}}`;
    const { codeVerifier, ...old } = JSON.parse((await w.t.redis.get(key)) ?? 'null') as Record<string, unknown>;
    expect(codeVerifier).toEqual(expect.any(String));
    await w.t.redis.set(key, JSON.stringify(old), 'EX', 600);
    const tokenCalls = w.chat.tokenRequests;
    const code = w.chat.registerUser({ id: '6660001', username: 'old' }, to.toString());
    const res = await w.t
      .auth()
      .get('/t/acme/chat/callback')
      .query({ code, state })
      .set('Cookie', cookieOf(c))
      .expect(400);
    expect(res.body).toMatchObject({ error: 'invalid_request' });
    expect(w.chat.tokenRequests).toBe(tokenCalls);
    // And the old record is spent, not left for another try.
    expect(await w.t.redis.exists(key)).toBe(0);
  });

  it('the platform, as Discord, refuses a PKCE-bound code without its verifier or with another one', async () => {
    // The application startGuestWorld configures for acme.
    const [clientId, clientSecret, redirectUri] = [
      'chat-app-1',
      'chat-secret-1',
      `${w.t.authOrigin}/t/acme/chat/callback`,
    ];
    const exchange = (code: string, verifier?: string) =>
      fetch(`${w.chat.apiBase}/oauth2/token`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: redirectUri,
          ...(verifier === undefined ? {} : { code_verifier: verifier }),
        }),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
    const verifier = 'v'.repeat(43);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const authorize = (q: Record<string, string>) => `${w.chat.authorizeUrl}?${new URLSearchParams(q).toString()}`;
    const bound = authorize({ code_challenge: challenge, code_challenge_method: 'S256' });
    const user = { id: '6660002', username: 'pkce' };
    const refused = { status: 400, body: { error: 'invalid_grant' } };
    expect(await exchange(w.chat.registerUser(user, bound))).toEqual(refused);
    expect(await exchange(w.chat.registerUser(user, bound), 'w'.repeat(43))).toEqual(refused);
    expect(await exchange(w.chat.registerUser(user, bound), challenge)).toEqual(refused);
    // A verifier for a code that had no challenge is refused too (the downgrade of RFC 9700 4.8.2).
    expect(await exchange(w.chat.registerUser(user), verifier)).toEqual(refused);
    expect(() => w.chat.registerUser(user, authorize({ code_challenge: challenge }))).toThrow();
    expect(await exchange(w.chat.registerUser(user, bound), verifier)).toMatchObject({ status: 200 });
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
    const { state } = await startChat(w, c);
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
    const { state: state2 } = await startChat(w, c);
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
    const { state } = await startChat(w, c);
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
