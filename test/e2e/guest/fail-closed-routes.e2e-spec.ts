import type { Response } from 'supertest';
import { GuestClient } from '../../../sdk/src/guest-client';
import { eventually } from '../../support/eventually';
import { emailProof, rawGuest, refreshGrant, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { PostgresOutage } from '../../support/postgres-outage';
import { PrivateRedis } from '../../support/private-redis';

/**
 * Promise (b) of the project, route by route, for the tenant routes the older fail-closed suites
 * (fail-closed, providers-fail-closed) do not reach: with Redis stalled, then with PostgreSQL
 * refusing connections, every route that issues a token, a proof or a session, or changes state,
 * answers 503 temporarily_unavailable with no token, no proof and no cookie; once the dependency is
 * back the same call works without a restart.
 */
const refusal = (r: Response) => ({
  status: r.status,
  error: (r.body as { error?: string }).error,
  token: r.body.access_token ?? r.body.refresh_token ?? r.body.id_token,
  proof: r.body.proof_id ?? (String(r.headers.location ?? '').includes('proof_id') ? 'in location' : undefined),
  cookie: r.headers['set-cookie'],
});
const REFUSED = {
  status: 503,
  error: 'temporarily_unavailable',
  token: undefined,
  proof: undefined,
  cookie: undefined,
};

const cookieOf = (c: GuestClient): string => `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`;
const flowOf = (c: GuestClient) => ({ client_id: 'cli_game', browser_flow_id: c.browserFlowId });
const pathOf = (url: string): string => {
  const u = new URL(url);
  return u.pathname + u.search;
};

/** Everything the routes under test need, made while both dependencies are up. */
async function prepare(w: GuestWorld, tag: string) {
  const chatUser = (n: number) => ({ id: `${tag.length}${Date.now()}${n}`, username: `${tag}-${n}` });
  // email/verify: a guest with an intent and a code on its way.
  const verifier = w.client();
  await verifier.createGuest();
  await verifier.createLinkingIntent();
  const verifyEmail = `${tag}-verify@example.com`;
  const after = w.t.smtp.messages.length;
  await verifier.startEmail(verifyEmail);
  const code = await w.t.smtp.waitForCode(verifyEmail, { after });
  // email/start and chat/start: a guest whose flow is under way.
  const starter = w.client();
  await starter.createGuest();
  // chat/go and chat/callback: a link and a state of a chat flow.
  const chat = w.client();
  await chat.createGuest();
  await chat.createLinkingIntent();
  const goLink = await chat.chatAuthorizeUrl();
  const chatStart = await w.t.auth().get(pathOf(chat.chatStartUrl())).set('Cookie', cookieOf(chat)).expect(302);
  const state = new URL(chatStart.headers.location as string).searchParams.get('state') as string;
  const chatCode = w.chat.registerUser(chatUser(1), chatStart.headers.location);
  // sign-in: a proof of an account in a guest's flow.
  const signer = w.client();
  await signer.createGuest();
  const signInProof = await emailProof(w, signer, `${tag}-sign-in@example.com`);
  // me/linking-intent and me/identities: a full account with two credentials.
  const player = w.client();
  await player.createGuest();
  await player.createLinkingIntent();
  await player.upgrade(await emailProof(w, player, `${tag}-player@example.com`));
  await player.createAccountLinkingIntent();
  await player.linkIdentity(await emailProof(w, player, `${tag}-second@example.com`));
  // DELETE me: a guest to erase.
  const leaver = w.client();
  await leaver.createGuest();
  // token and revoke: guests of their own (a command that timed out may still run on resume).
  const refresher = await rawGuest(w);
  const revoker = await rawGuest(w);
  return {
    verifier,
    verifyEmail,
    code,
    starter,
    chat,
    goLink,
    state,
    chatCode,
    signer,
    signInProof,
    player,
    leaver,
    refresher,
    revoker,
  };
}

type Prepared = Awaited<ReturnType<typeof prepare>>;

/** The calls of the routes under test, named. */
function calls(w: GuestWorld, p: Prepared, subject = ''): Record<string, () => PromiseLike<Response>> {
  const bearer = (c: GuestClient) => `Bearer ${c.accessToken as string}`;
  return {
    'POST email/start': () =>
      w.t
        .auth()
        .post('/t/acme/email/start')
        .set('Cookie', cookieOf(p.starter))
        .send({ ...flowOf(p.starter), email: 'outage-start@example.com' }),
    'POST email/verify': () =>
      w.t
        .auth()
        .post('/t/acme/email/verify')
        .set('Cookie', cookieOf(p.verifier))
        .send({ ...flowOf(p.verifier), email: p.verifyEmail, code: p.code }),
    'GET chat/start': () => w.t.auth().get(pathOf(p.starter.chatStartUrl())).set('Cookie', cookieOf(p.starter)),
    'POST chat/start': () =>
      w.t.auth().post('/t/acme/chat/start').set('Cookie', cookieOf(p.starter)).send(flowOf(p.starter)),
    'GET chat/go': () => w.t.auth().get(pathOf(p.goLink)),
    'GET chat/callback': () =>
      w.t
        .auth()
        .get('/t/acme/chat/callback')
        .query({ code: p.chatCode, state: p.state })
        .set('Cookie', cookieOf(p.chat)),
    'POST sign-in': () =>
      w.t
        .auth()
        .post('/t/acme/sign-in')
        .set('Cookie', cookieOf(p.signer))
        .send({ ...flowOf(p.signer), proof_id: p.signInProof }),
    'POST me/linking-intent': () =>
      w.t
        .auth()
        .post('/t/acme/me/linking-intent')
        .set('Authorization', bearer(p.player))
        .set('Cookie', cookieOf(p.player))
        .send(flowOf(p.player)),
    'DELETE me/identities': () =>
      w.t
        .auth()
        .delete(`/t/acme/me/identities/email/${encodeURIComponent(subject)}`)
        .set('Authorization', bearer(p.player)),
    'DELETE me': () => w.t.auth().delete('/t/acme/me').set('Authorization', bearer(p.leaver)),
    'POST token': () => refreshGrant(w, p.refresher.refresh),
    'POST revoke': () =>
      w.t.auth().post('/t/acme/revoke').type('form').send({ token: p.revoker.refresh, client_id: 'cli_game' }),
  };
}

/** The player's second email identity, as the unlink route names it. */
async function secondIdentity(w: GuestWorld, p: Prepared): Promise<string> {
  const me = await w.t
    .auth()
    .get('/t/acme/me')
    .set('Authorization', `Bearer ${p.player.accessToken as string}`);
  const ids = (me.body.user.identities as { provider: string; provider_subject: string }[]).map(
    (i) => i.provider_subject,
  );
  return ids.find((s) => s.includes('second')) as string;
}

async function refusedWhile(w: GuestWorld, p: Prepared, subject: string, names: string[]): Promise<void> {
  const all = calls(w, p, subject);
  const answers = await Promise.all(
    names.map(async (name) => [name, refusal(await (all[name] as () => PromiseLike<Response>)())] as const),
  );
  expect(Object.fromEntries(answers)).toEqual(Object.fromEntries(names.map((n) => [n, REFUSED])));
}

/** After the outage: each route serves again, with the same inputs where the refused call spent nothing. */
async function servesAgain(w: GuestWorld, p: Prepared, subject: string): Promise<void> {
  const all = calls(w, p, subject);
  await all['POST email/start']!().then((r) => expect(r.status).toBe(202));
  await all['GET chat/start']!().then((r) => expect(r.status).toBe(302));
  await all['POST chat/start']!().then((r) => expect(r.status).toBe(200));
  // The refused bounce and callback spent their link and state (taken first, so used once at most):
  // a new link and a new state work.
  const link = await p.chat.chatAuthorizeUrl();
  expect((await w.t.auth().get(pathOf(link))).status).toBe(302);
  const start = await w.t.auth().get(pathOf(p.chat.chatStartUrl())).set('Cookie', cookieOf(p.chat)).expect(302);
  const state = new URL(start.headers.location as string).searchParams.get('state') as string;
  const back = await w.t
    .auth()
    .get('/t/acme/chat/callback')
    .query({
      code: w.chat.registerUser({ id: `${Date.now()}9`, username: 'back' }, start.headers.location as string),
      state,
    })
    .set('Cookie', cookieOf(p.chat))
    .expect(302);
  expect(GuestClient.chatRedirectResult(back.headers.location as string).proof_id).toMatch(/^prf_/);
  await all['POST me/linking-intent']!().then((r) => expect([200, 201]).toContain(r.status));
  await all['DELETE me/identities']!().then((r) => expect(r.status).toBe(200));
  await all['DELETE me']!().then((r) => expect(r.body).toEqual({ deleted: true }));
}

describe('tenant routes fail closed when Redis stalls', () => {
  let redis: PrivateRedis;
  let w: GuestWorld;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    w = await startGuestWorld({ REDIS_URL: redis.url, RATE_LIMITS: 'off', DEPENDENCY_TIMEOUT_MS: '500' });
  });
  afterAll(async () => {
    redis.resume();
    await w.close().catch(() => undefined);
    await redis.stop();
  });

  it('answers 503 with no token, proof or cookie on every route, then serves again once Redis is back', async () => {
    const p = await prepare(w, 'redis');
    const subject = await secondIdentity(w, p);
    const mails = w.t.smtp.messages.length;
    redis.pause();
    try {
      await refusedWhile(w, p, subject, [
        'POST email/verify',
        'GET chat/start',
        'POST chat/start',
        'GET chat/go',
        'GET chat/callback',
        'POST sign-in',
        'POST me/linking-intent',
        'DELETE me/identities',
        'DELETE me',
      ]);
    } finally {
      redis.resume();
    }
    await eventually(async () => (await w.t.auth().get('/readyz')).status === 200, 10_000);
    // Only reads reached Redis before the refusals: the code and the proof still work.
    const verified = await calls(w, p)['POST email/verify']!();
    expect(verified.status).toBe(200);
    const signedIn = await calls(w, p)['POST sign-in']!();
    expect(signedIn.status).toBe(200);
    expect(w.t.smtp.messages.length).toBe(mails);
    await servesAgain(w, p, subject);
  });
});

describe('tenant routes fail closed when PostgreSQL refuses connections', () => {
  let w: GuestWorld;
  let outage: PostgresOutage;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    outage = await PostgresOutage.of(w.t.databaseName);
  });
  afterAll(async () => {
    await outage.end();
    await w.close();
  });

  it('answers 503 with no token, proof or cookie on every route, changes nothing, then serves again', async () => {
    const p = await prepare(w, 'pg');
    const subject = await secondIdentity(w, p);
    const intentOwner = w.client();
    await intentOwner.createGuest();
    const mails = w.t.smtp.messages.length;
    await outage.cut();
    try {
      await refusedWhile(w, p, subject, [
        'POST email/start',
        'POST email/verify',
        'GET chat/start',
        'POST chat/start',
        'GET chat/go',
        'GET chat/callback',
        'POST sign-in',
        'POST me/linking-intent',
        'DELETE me/identities',
        'DELETE me',
        'POST token',
        'POST revoke',
      ]);
      const intent = await w.t
        .auth()
        .post('/t/acme/guest/linking-intent')
        .set('Authorization', `Bearer ${intentOwner.accessToken as string}`)
        .set('Cookie', cookieOf(intentOwner))
        .send(flowOf(intentOwner));
      expect(refusal(intent)).toEqual(REFUSED);
    } finally {
      await outage.restore();
    }
    await eventually(async () => (await w.t.auth().get('/readyz')).status === 200, 10_000);
    expect(w.t.smtp.messages.length).toBe(mails);
    // Nothing rotated and nothing was revoked: both tokens still work.
    await refreshGrant(w, p.refresher.refresh).expect(200);
    await w.t
      .auth()
      .post('/t/acme/revoke')
      .type('form')
      .send({ token: p.revoker.refresh, client_id: 'cli_game' })
      .expect(200);
    expect((await refreshGrant(w, p.revoker.refresh)).status).toBe(400);
    expect(await intentOwner.createLinkingIntent()).toMatchObject({ intent_id: expect.stringMatching(/^lnk_/) });
    // The refused verify and sign-in failed before spending anything: the code and the proof still work.
    const again = {
      verify: (await calls(w, p)['POST email/verify']!()).status,
      signIn: (await calls(w, p)['POST sign-in']!()).status,
    };
    expect(again).toEqual({ verify: 200, signIn: 200 });
    await servesAgain(w, p, subject);
  });
});
