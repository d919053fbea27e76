import type { Client } from 'pg';
import type { Response } from 'supertest';
import { GuestClient } from '../../../sdk/src/guest-client';
import { eventually } from '../../support/eventually';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { TestBrowser } from '../../support/oidc-issuer';
import { PostgresOutage } from '../../support/postgres-outage';
import { PrivateRedis } from '../../support/private-redis';
import { browserWithFlow, NATIVE_APP_ID, startProviders, type ProviderWorld } from '../../support/provider-fixtures';

/**
 * Promise (b) for the identity-provider routes of contract 14 that providers-fail-closed (Redis
 * stalled) does not reach: with PostgreSQL refusing connections, `GET|POST providers/{id}/start`,
 * `GET providers/go`, `GET|POST providers/callback`, `POST providers/{id}/token` and `POST
 * me/identities`; with Redis stalled, `GET providers/go` and `POST providers/callback`. Each answers
 * 503 temporarily_unavailable with no proof, no token and no cookie, and changes no row; once the
 * dependency is back the flows work again without a restart. `POST providers/callback` (Sign in with
 * Apple's form_post) reads nothing: it answers its 303 to the GET callback whatever is down, and
 * that GET is where the refusal happens.
 */
const refusal = (r: Response) => ({
  status: r.status,
  error: (r.body as { error?: string }).error,
  token: r.body.access_token ?? r.body.refresh_token ?? r.body.id_token,
  proof:
    r.body.proof_id ??
    r.body.authorize_url ??
    (/proof_id=/.test(String(r.headers.location)) ? 'in location' : undefined),
  location: r.headers.location,
  cookie: r.headers['set-cookie'],
});
const REFUSED = {
  status: 503,
  error: 'temporarily_unavailable',
  token: undefined,
  proof: undefined,
  location: undefined,
  cookie: undefined,
};

const cookieOf = (c: GuestClient): string => `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`;
const flowOf = (c: GuestClient) => ({ client_id: 'cli_game', browser_flow_id: c.browserFlowId });
const pathOf = (url: string | URL): string => {
  const u = new URL(url);
  return u.pathname + u.search;
};

/** The rows a provider sign-in or a link could write, and the proofs, states and handles in Redis. */
async function snapshot(w: GuestWorld, pg: Pick<Client, 'query'>) {
  const one = async (sql: string) => (await pg.query(sql)).rows[0] as unknown;
  const keys = await w.t.redisKeys();
  return {
    users: await one(`SELECT count(*)::int AS n, string_agg(status, ',' ORDER BY id) AS s FROM users`),
    identities: await one(
      `SELECT count(*)::int AS n, string_agg(user_id || ':' || provider || ':' || provider_subject, ',' ORDER BY id) AS s FROM identities`,
    ),
    sessions: await one(`SELECT count(*)::int AS n FROM sessions WHERE revoked_at IS NULL`),
    audit: await one(`SELECT count(*)::int AS n FROM audit_events`),
    proofs: keys.filter((k) => k.includes(':prf:')),
    states: keys.filter((k) => k.startsWith('gps:')),
    handles: keys.filter((k) => k.startsWith('gph:')),
  };
}

describe('identity-provider routes fail closed when PostgreSQL refuses connections', () => {
  let w: GuestWorld;
  let p: ProviderWorld;
  let outage: PostgresOutage;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off', DEPENDENCY_TIMEOUT_MS: '500' });
    p = await startProviders(w);
    outage = await PostgresOutage.of(w.t.databaseName);
  });
  afterAll(async () => {
    await outage.end();
    await p.stop();
    await w.close();
  });

  it('answers 503 with no proof, token or cookie on every provider route, changes nothing, then serves again', async () => {
    const now = Math.floor(Date.now() / 1000);
    // start (GET and POST): a guest whose flow is under way.
    const starter = w.client();
    await starter.createGuest();
    // go: a page's one-time link.
    const paged = w.client();
    await paged.createGuest();
    const goLink = await paged.providerAuthorizeUrl('google');
    // callback (GET): a real code and state of the plain issuer, stopped at the service's callback.
    const returning = w.client();
    await returning.createGuest();
    await p.plain.setAccount({ sub: 'pg-callback-1' });
    const atIssuer = await w.t
      .auth()
      .get(pathOf(returning.providerStartUrl('google')))
      .set('Cookie', cookieOf(returning));
    expect(atIssuer.status).toBe(302);
    const callback = new URL(await new TestBrowser(['127.0.0.1']).navigate(atIssuer.headers.location as string));
    expect(callback.pathname).toBe('/t/acme/providers/callback');
    // callback (POST, form_post): a state of the Apple-like issuer.
    const apple = w.client();
    await apple.createGuest();
    const atApple = await w.t
      .auth()
      .get(pathOf(apple.providerStartUrl('apple')))
      .set('Cookie', cookieOf(apple));
    const appleState = new URL(atApple.headers.location as string).searchParams.get('state') as string;
    // token: a native ID token of a guest with a linking intent.
    const native = w.client();
    await native.createGuest();
    await native.createLinkingIntent();
    const idToken = await p.plain.sign({
      iss: p.plain.issuer,
      aud: NATIVE_APP_ID,
      sub: 'pg-native-1',
      iat: now,
      exp: now + 300,
    });
    // me/identities: a full account with an intent and a provider proof to link.
    const player = w.client();
    await player.createGuest();
    await player.createLinkingIntent();
    await player.upgrade(await emailProof(w, player, 'pg-provider-player@example.com'));
    await player.createAccountLinkingIntent();
    const linkToken = await p.plain.sign({
      iss: p.plain.issuer,
      aud: NATIVE_APP_ID,
      sub: 'pg-link-1',
      iat: now,
      exp: now + 300,
    });
    const linkProof = (await player.providerToken('google', linkToken)).proof_id;

    const calls: Record<string, () => PromiseLike<Response>> = {
      'GET providers/google/start': () =>
        w.t
          .auth()
          .get(pathOf(starter.providerStartUrl('google')))
          .set('Cookie', cookieOf(starter)),
      'POST providers/google/start': () =>
        w.t.auth().post('/t/acme/providers/google/start').set('Cookie', cookieOf(starter)).send(flowOf(starter)),
      'GET providers/go': () => w.t.auth().get(pathOf(goLink)),
      'GET providers/callback': () => w.t.auth().get(pathOf(callback)).set('Cookie', cookieOf(returning)),
      'POST providers/google/token': () =>
        w.t
          .auth()
          .post('/t/acme/providers/google/token')
          .set('Cookie', cookieOf(native))
          .send({ ...flowOf(native), id_token: idToken }),
      'POST me/identities': () =>
        w.t
          .auth()
          .post('/t/acme/me/identities')
          .set('Authorization', `Bearer ${player.accessToken as string}`)
          .set('Cookie', cookieOf(player))
          .send({ ...flowOf(player), proof_id: linkProof }),
    };
    const before = await snapshot(w, w.t.pg);

    await outage.cut();
    try {
      const names = Object.keys(calls);
      const answers: Record<string, unknown> = {};
      for (const name of names) answers[name] = refusal(await (calls[name] as () => PromiseLike<Response>)());
      expect(answers).toEqual(Object.fromEntries(names.map((n) => [n, REFUSED])));
      // The form_post callback reads nothing: on to the GET callback, which is refused the same way.
      const posted = await w.t
        .auth()
        .post('/t/acme/providers/callback')
        .type('form')
        .send({ code: 'c0de', state: appleState });
      expect({ status: posted.status, cookie: posted.headers['set-cookie'] }).toEqual({
        status: 303,
        cookie: undefined,
      });
      const resumed = new URL(posted.headers.location as string);
      expect(resumed.pathname).toBe('/t/acme/providers/callback');
      expect(refusal(await w.t.auth().get(pathOf(resumed)).set('Cookie', cookieOf(apple)))).toEqual(REFUSED);
    } finally {
      await outage.restore();
    }
    await eventually(async () => (await w.t.auth().get('/readyz')).status === 200, 10_000);
    // Changed: only the one-time link and the two states the refused calls took first (used once at
    // most, as chat/go and chat/callback). No user, identity, session, audit row, proof or new state.
    const after = await outage.fresh((pg) => snapshot(w, pg));
    expect(after).toEqual({
      ...before,
      states: before.states.filter((k) => after.states.includes(k)),
      handles: before.handles.filter((k) => after.handles.includes(k)),
    });
    expect([after.states.length, after.handles.length]).toEqual([before.states.length - 2, before.handles.length - 1]);

    // Back: every route serves again.
    expect((await calls['GET providers/google/start']!()).status).toBe(302);
    expect((await calls['POST providers/google/start']!()).body).toEqual({ authorize_url: expect.any(String) });
    // The refused native token and link spent nothing: the same token and proof work now.
    const proof = await calls['POST providers/google/token']!();
    expect(proof.status).toBe(200);
    expect((await native.upgrade(proof.body.proof_id as string)).linked_identity).toMatchObject({
      provider: 'google',
      provider_subject: 'pg-native-1',
    });
    const linked = await calls['POST me/identities']!();
    expect(linked.status).toBe(200);
    expect(linked.body.linked_identity).toMatchObject({ provider: 'google', provider_subject: 'pg-link-1' });
    // The spent link and state are refused as used; a new link and a new round at each issuer work.
    expect(refusal(await calls['GET providers/go']!())).toMatchObject({ status: 400, error: 'invalid_request' });
    expect((await calls['GET providers/callback']!()).status).toBe(400);
    const fresh = w.client();
    await fresh.createGuest();
    await p.plain.setAccount({ sub: 'pg-after-1' });
    const back = await browserWithFlow(fresh.browserFlowId, undefined).navigate(
      await fresh.providerAuthorizeUrl('google'),
    );
    expect(GuestClient.providerRedirectResult(back).proof_id).toMatch(/^prf_/);
    await p.apple.setAccount({ sub: 'pg-apple-1' });
    const appleBack = await browserWithFlow(apple.browserFlowId, apple.flowCookie()).navigate(
      apple.providerStartUrl('apple'),
    );
    expect(GuestClient.providerRedirectResult(appleBack).proof_id).toMatch(/^prf_/);
  });
});

describe('the provider bounce and form_post callback fail closed when Redis stalls', () => {
  let redis: PrivateRedis;
  let w: GuestWorld;
  let p: ProviderWorld;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    w = await startGuestWorld({ REDIS_URL: redis.url, RATE_LIMITS: 'off', DEPENDENCY_TIMEOUT_MS: '500' });
    p = await startProviders(w);
  });
  afterAll(async () => {
    redis.resume();
    await p.stop();
    await w.close().catch(() => undefined);
    await redis.stop();
  });

  it('answers 503 on go and on the GET the form_post callback leads to; no proof, no cookie, no row; then works', async () => {
    const paged = w.client();
    await paged.createGuest();
    const goLink = await paged.providerAuthorizeUrl('google');
    const apple = w.client();
    await apple.createGuest();
    const atApple = await w.t
      .auth()
      .get(pathOf(apple.providerStartUrl('apple')))
      .set('Cookie', cookieOf(apple));
    const appleState = new URL(atApple.headers.location as string).searchParams.get('state') as string;
    const rows = async () => (await w.t.pg.query(`SELECT count(*)::int AS n FROM identities`)).rows[0].n as number;
    const identities = await rows();
    const proofs = async () => (await w.t.redisKeys()).filter((k) => k.includes(':prf:'));
    const proofsBefore = await proofs();

    redis.pause();
    try {
      const [go, posted] = await Promise.all([
        w.t.auth().get(pathOf(goLink)),
        w.t.auth().post('/t/acme/providers/callback').type('form').send({ code: 'c0de', state: appleState }),
      ]);
      expect(refusal(go)).toEqual(REFUSED);
      // form_post reads nothing: on to the GET callback, which is refused.
      expect({ status: posted.status, cookie: posted.headers['set-cookie'] }).toEqual({
        status: 303,
        cookie: undefined,
      });
      const resumed = new URL(posted.headers.location as string);
      expect(Object.fromEntries(resumed.searchParams)).toEqual({ code: 'c0de', state: appleState });
      expect(refusal(await w.t.auth().get(pathOf(resumed)).set('Cookie', cookieOf(apple)))).toEqual(REFUSED);
    } finally {
      redis.resume();
    }
    await eventually(async () => (await w.t.auth().get('/readyz')).status === 200, 10_000);
    expect(await rows()).toBe(identities);
    expect(await proofs()).toEqual(proofsBefore);

    // Back: a take that timed out may still have run on resume, so the old link is either unused or
    // spent (never both ways); a new link and a full form_post round work.
    const again = await w.t.auth().get(pathOf(goLink));
    expect([302, 400]).toContain(again.status);
    await p.plain.setAccount({ sub: 'stall-go-1' });
    const fresh = w.client();
    await fresh.createGuest();
    const back = await browserWithFlow(fresh.browserFlowId, undefined).navigate(
      await fresh.providerAuthorizeUrl('google'),
    );
    expect(GuestClient.providerRedirectResult(back).proof_id).toMatch(/^prf_/);
    await p.apple.setAccount({ sub: 'stall-apple-1' });
    const appleBack = await browserWithFlow(apple.browserFlowId, apple.flowCookie()).navigate(
      apple.providerStartUrl('apple'),
    );
    expect(GuestClient.providerRedirectResult(appleBack).proof_id).toMatch(/^prf_/);
  });
});
