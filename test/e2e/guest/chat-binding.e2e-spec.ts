import { GuestClient } from '../../../sdk/src/guest-client';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * Issue 22, finding 2: a page's chat flow is bound to the browser that follows its
 * `authorize_url`. The URL is a one-time bounce on the auth host that sets a first-party cookie
 * before sending the browser to the platform; the callback requires that cookie, the platform is
 * never asked for `prompt=none`, and the proof comes back as a query parameter (contract section
 * 6), bound to the flow cookie. The same attack in Chromium, with two browser contexts, is in
 * browser.e2e-spec.ts.
 */
describe('chat page flow bound to the browser that follows it', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
  let nextUser = 0;
  const chatUser = () => ({ id: String(6_100_000 + ++nextUser), username: `bound${nextUser}` });

  /** A page's flow: a guest and its linking intent, then `POST chat/start`. */
  async function pageFlow(): Promise<{ c: GuestClient; authorizeUrl: string }> {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    return { c, authorizeUrl: await c.chatAuthorizeUrl() };
  }

  /**
   * A browser following the link: the bounce's cookie (`name=value`), the platform's URL (whose
   * PKCE challenge the platform binds to the code it issues on consent) and its state.
   */
  async function follow(
    authorizeUrl: string,
  ): Promise<{ cookie: string; platformUrl: string; state: string; setCookie: string }> {
    const bounce = await w.t.auth().get(pathOf(authorizeUrl)).expect(302);
    const setCookie = ((bounce.headers['set-cookie'] as unknown as string[] | undefined) ?? []).join('\n');
    const to = new URL(bounce.headers.location as string);
    expect(`${to.origin}${to.pathname}`).toBe(w.chat.authorizeUrl);
    return {
      cookie: setCookie.split(';')[0] ?? '',
      platformUrl: to.toString(),
      state: to.searchParams.get('state') as string,
      setCookie,
    };
  }

  /**
   * A page's link carried to another browser: the attacker follows its own authorize_url, so its
   * browser holds the binding, and sends the platform's URL (with the state and the challenge) to
   * the victim, who has a flow and a bounce of its own.
   */
  async function carriedLink() {
    const attacker = await pageFlow();
    const attackerBrowser = await follow(attacker.authorizeUrl);
    const victim = await pageFlow();
    const victimBrowser = await follow(victim.authorizeUrl);
    return { attacker, attackerBrowser, victim, victimBrowser };
  }

  const callback = (state: string, code: string, cookie?: string) => {
    const req = w.t.auth().get('/t/acme/chat/callback').query({ code, state });
    return cookie === undefined ? req : req.set('Cookie', cookie);
  };

  it('points authorize_url at a one-time bounce that sets a first-party cookie and never asks for prompt=none', async () => {
    const { c, authorizeUrl } = await pageFlow();
    const link = new URL(authorizeUrl);
    expect(`${link.origin}${link.pathname}`).toBe(`${w.t.authOrigin}/t/acme/chat/go`);
    expect([...link.searchParams.keys()]).toEqual(['handle']);

    const { cookie, platformUrl, state, setCookie } = await follow(authorizeUrl);
    // PKCE S256 (RFC 9700): the platform binds the code to this challenge; the verifier stays server-side.
    const platformQuery = new URL(platformUrl).searchParams;
    expect(platformQuery.get('code_challenge_method')).toBe('S256');
    expect(platformQuery.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(platformQuery.has('code_verifier')).toBe(false);
    expect(setCookie).toMatch(
      /^__Host-svc_chat_[A-Za-z0-9_-]{16}=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(w.chat.lastAuthorizeQuery.has('prompt')).toBe(false);
    // The link is spent: followed again (by anyone), it goes nowhere.
    await w.t.auth().get(pathOf(authorizeUrl)).expect(400);

    const user = chatUser();
    const back = await callback(state, w.chat.registerUser(user, platformUrl), cookie).expect(302);
    const location = new URL(back.headers.location as string);
    expect(location.hash).toBe('');
    expect([...location.searchParams.keys()]).toEqual(['proof_id', 'expires_in']);
    // The bounce cookie is spent with the state.
    const cookieName = cookie.split('=')[0] as string;
    expect(back.headers['set-cookie']).toEqual([
      expect.stringMatching(
        new RegExp(`^${cookieName}=; Max-Age=0; Path=/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$`),
      ),
    ]);
    // A script that reads the proof from the address cannot use it from a flow of its own: the
    // proof is bound to the page's flow and its HttpOnly cookie, and the attempt spends nothing.
    const proofId = GuestClient.chatRedirectResult(location.toString()).proof_id;
    const thief = w.client();
    await thief.createGuest();
    await thief.createLinkingIntent();
    await expect(thief.upgrade(proofId)).rejects.toMatchObject({ status: 400, code: 'invalid_proof' });
    const upgraded = await c.upgrade(proofId);
    expect(upgraded.linked_identity).toMatchObject({ provider: 'chat_platform', provider_subject: user.id });
  });

  it('spends neither the link nor the state on HEAD (a link checker or a preview), which is refused', async () => {
    const { c, authorizeUrl } = await pageFlow();
    const refused = await w.t.auth().head(pathOf(authorizeUrl)).expect(405);
    expect(refused.headers['allow']).toBe('GET');
    const { cookie, platformUrl, state } = await follow(authorizeUrl);
    const code = w.chat.registerUser(chatUser(), platformUrl);
    await w.t.auth().head('/t/acme/chat/callback').query({ code, state }).set('Cookie', cookie).expect(405);
    const back = await callback(state, code, cookie).expect(302);
    const proofId = GuestClient.chatRedirectResult(back.headers.location as string).proof_id;
    expect((await c.upgrade(proofId)).linked_identity.provider).toBe('chat_platform');
  });

  it('refuses a callback without the bounce cookie, or with the flow cookie instead: access_denied, nothing proven', async () => {
    const { c, authorizeUrl } = await pageFlow();
    const user = chatUser();
    const tokenCalls = w.chat.tokenRequests;
    for (const cookie of [undefined, `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`]) {
      const { state } = await follow(await c.chatAuthorizeUrl());
      const refused = await callback(state, w.chat.registerUser(user), cookie).expect(302);
      expect(refused.headers.location).toBe('https://play.acme.example/auth?error=access_denied');
      // The state was spent by the refusal.
      await callback(state, w.chat.registerUser(user), cookie).expect(400);
    }
    expect(authorizeUrl).not.toBe(await c.chatAuthorizeUrl());
    expect(w.chat.tokenRequests).toBe(tokenCalls);
    const rows = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE provider_subject = $1`, [user.id]);
    expect(rows.rows[0].n).toBe(0);
  });

  it('refuses a state carried to another browser: the attacker follows its own link, the victim consents', async () => {
    const { attacker, attackerBrowser, victim, victimBrowser } = await carriedLink();
    const user = chatUser();
    const tokenCalls = w.chat.tokenRequests;

    const cookies = [
      victimBrowser.cookie,
      // The right cookie name with the victim's own value, and a made-up value.
      `${attackerBrowser.cookie.split('=')[0] as string}=${victimBrowser.cookie.split('=')[1] as string}`,
      `${attackerBrowser.cookie.split('=')[0] as string}=${'A'.repeat(43)}`,
    ];
    for (const cookie of cookies) {
      const again = await follow(await attacker.c.chatAuthorizeUrl());
      const refused = await callback(again.state, w.chat.registerUser(user), cookie).expect(302);
      expect(refused.headers.location).toBe('https://play.acme.example/auth?error=access_denied');
    }
    const refused = await callback(attackerBrowser.state, w.chat.registerUser(user), victimBrowser.cookie).expect(302);
    expect(refused.headers.location).toBe('https://play.acme.example/auth?error=access_denied');
    // Nothing of the victim's account reached the platform's token endpoint or the directory.
    expect(w.chat.tokenRequests).toBe(tokenCalls);
    const rows = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE provider_subject = $1`, [user.id]);
    expect(rows.rows[0].n).toBe(0);
    // And the victim's own flow still works in the victim's browser.
    const own = await callback(
      victimBrowser.state,
      w.chat.registerUser(user, victimBrowser.platformUrl),
      victimBrowser.cookie,
    ).expect(302);
    await victim.c.upgrade(GuestClient.chatRedirectResult(own.headers.location as string).proof_id);
  });

  it('refuses the victim’s unexchanged code with a fresh state of the attacker’s own flow (PKCE): no proof, no identity', async () => {
    // As above: the attacker's platform URL carried to the victim, who consents; the callback in
    // the victim's browser is refused before the exchange, so the code stays valid at the platform.
    const { attacker, attackerBrowser, victimBrowser } = await carriedLink();
    const user = chatUser();
    const victimCode = w.chat.registerUser(user, attackerBrowser.platformUrl);
    const tokenCalls = w.chat.tokenRequests;
    const userCalls = w.chat.userRequests;
    const refused = await callback(attackerBrowser.state, victimCode, victimBrowser.cookie).expect(302);
    expect(refused.headers.location).toBe('https://play.acme.example/auth?error=access_denied');
    expect(w.chat.tokenRequests).toBe(tokenCalls);

    // The code leaks (history, a proxy log). The attacker starts a flow of its own, with a fresh
    // state bound to its own cookie, and brings the code to the callback from its own browser.
    const fresh = await follow(await attacker.c.chatAuthorizeUrl());
    const stolen = await callback(fresh.state, victimCode, fresh.cookie).expect(302);
    // The platform refuses the exchange: the code is bound to the challenge of the state the
    // victim's callback spent, and the fresh state's verifier does not match it.
    expect(stolen.headers.location).toBe('https://play.acme.example/auth?error=server_error');
    expect(w.chat.tokenRequests).toBe(tokenCalls + 1);
    expect(w.chat.userRequests).toBe(userCalls);
    const rows = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE provider_subject = $1`, [user.id]);
    expect(rows.rows[0].n).toBe(0);
  });

  it('refuses a made-up, malformed or other tenant’s handle before anything is written', async () => {
    const { authorizeUrl } = await pageFlow();
    const handle = new URL(authorizeUrl).searchParams.get('handle') as string;
    await w.t.auth().get('/t/beta/chat/go').query({ handle }).expect(400);
    // The other tenant's attempt spent it too: a link is followed once.
    await w.t.auth().get(pathOf(authorizeUrl)).expect(400);
    await w.t
      .auth()
      .get('/t/acme/chat/go')
      .query({ handle: 'A'.repeat(43) })
      .expect(400);
    for (const query of [{}, { handle: 'short' }, { handle: `${'A'.repeat(43)}!` }, { handle, extra: '1' }]) {
      const res = await w.t.auth().get('/t/acme/chat/go').query(query).expect(400);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('the top-level GET chat/start stays bound by the flow cookie, and asks for no prompt=none either', async () => {
    const c = w.client();
    await c.createGuest();
    const start = await w.t
      .auth()
      .get(pathOf(c.chatStartUrl()))
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .expect(302);
    const to = new URL(start.headers.location as string);
    expect(to.searchParams.has('prompt')).toBe(false);
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    const other = w.client();
    await other.createGuest();
    const refused = await callback(
      to.searchParams.get('state') as string,
      w.chat.registerUser(chatUser()),
      `__Host-svc_flow_${other.browserFlowId}=${other.flowCookie()}`,
    ).expect(302);
    expect(refused.headers.location).toBe('https://play.acme.example/auth?error=access_denied');
  });
});
