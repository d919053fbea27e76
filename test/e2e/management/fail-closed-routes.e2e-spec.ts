import { randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import { createClient, emailUserId } from '../../support/console-fixtures';
import {
  CONSOLE_COOKIE,
  consoleSignIn,
  consoleStart,
  setCookieLine,
  signInAtAuthHost,
  consoleCallback,
} from '../../support/console-flow';
import { startConsoleTenant, type ConsoleTenant } from '../../support/console-tenant';
import { eventually } from '../../support/eventually';
import {
  authorizeQuery,
  callbackUri,
  confirmCode,
  emailPost,
  pkcePair,
  requestCode,
  signIn,
  startFlow,
  tokenRequest,
} from '../../support/management-flow';
import { PostgresOutage } from '../../support/postgres-outage';
import { PrivateRedis } from '../../support/private-redis';

/**
 * Promise (b) of the project, route by route, for the control plane, the console BFF and the
 * management API where the older fail-closed suites do not reach: with Redis stalled, then with
 * PostgreSQL refusing connections, every route that issues a token, a code or a session, or changes
 * state, answers 503 temporarily_unavailable with no token and no session cookie, changes nothing,
 * and works again once the dependency is back, without a restart.
 */
const T = '/management/tenants/acme';
const refusal = (r: Response) => ({
  status: r.status,
  error: (r.body as { error?: string }).error,
  token: r.body.access_token ?? r.body.refresh_token ?? r.body.redirect_to,
  session: setCookieLine(r, CONSOLE_COOKIE),
});
const REFUSED = { status: 503, error: 'temporarily_unavailable', token: undefined, session: undefined };

/** What the management writes touch, read on a connection of its own. */
async function writes(w: ConsoleTenant, outage: PostgresOutage | null): Promise<Record<string, unknown>> {
  const read = async (pg: { query: ConsoleTenant['t']['pg']['query'] }) => {
    const one = async (sql: string) => (await pg.query(sql)).rows[0] as unknown;
    return {
      clients: await one(
        `SELECT count(*)::int AS n, string_agg(name, ',' ORDER BY id) AS names FROM clients WHERE tenant_id = 'acme'`,
      ),
      memberships: await one(`SELECT count(*)::int AS n FROM memberships WHERE tenant_id = 'acme'`),
      players: await one(`SELECT string_agg(status, ',' ORDER BY id) AS s FROM users WHERE tenant_id = 'acme'`),
      sessions: await one(`SELECT count(*)::int AS n FROM sessions WHERE revoked_at IS NULL`),
    };
  };
  return outage ? outage.fresh((pg) => read(pg)) : read(w.t.pg);
}

/** The management API's writes, and one read, as the console's members call them. */
function managementCalls(w: ConsoleTenant, player: string, newcomer: string) {
  return {
    'POST clients': () =>
      w.as('admin').post(`${T}/clients`, {
        name: `Outage ${randomBytes(3).toString('hex')}`,
        type: 'browser',
        scopes: ['openid'],
        redirect_uris: ['https://outage.acme.example/auth'],
        web_origins: [],
      }),
    'PATCH client': () => w.as('admin').patch(`${T}/clients/cli_outage`, { name: 'Renamed in an outage' }),
    'POST deactivate': () => w.as('admin').post(`${T}/users/${player}/deactivate`),
    'DELETE user': () => w.as('admin').delete(`${T}/users/${player}`),
    'POST members': () => w.as('owner').post(`${T}/members`, { email: newcomer, role: 'viewer' }),
    'DELETE member': () => w.as('owner').delete(`${T}/members/${w.userIds.viewer}`),
    'GET audit': () => w.as('admin').get(`${T}/audit`),
  };
}

function describeOutage(
  name: string,
  setUp: () => Promise<{
    w: ConsoleTenant;
    cut: () => Promise<void>;
    back: () => Promise<void>;
    outage: PostgresOutage | null;
    end: () => Promise<void>;
  }>,
  /** Routes that do not need the missing dependency at all, and their ordinary answer meanwhile. */
  servedWithout: Record<string, number> = {},
) {
  describe(name, () => {
    let env: Awaited<ReturnType<typeof setUp>>;
    beforeAll(async () => {
      env = await setUp();
    });
    afterAll(async () => {
      await env.end();
    });

    it('answers 503 with no token or session on every route, changes nothing, and recovers', async () => {
      const { w, outage } = env;
      const t = w.t;
      await createClient(t, 'acme', { id: 'cli_outage', name: 'Outage client' });
      const player = await emailUserId(t, 'acme', `player-${randomBytes(3).toString('hex')}@example.com`);
      const newcomer = `newcomer-${randomBytes(3).toString('hex')}@studio.example`;
      // Control plane: a flow with a code sent, an authorization code, a signed-in session.
      const confirmFlow = await startFlow(t);
      const confirmEmail = `confirm-${randomBytes(3).toString('hex')}@studio.example`;
      const emailCode = await requestCode(t, confirmFlow, confirmEmail);
      const codeFlow = await startFlow(t);
      const codeEmail = `code-${randomBytes(3).toString('hex')}@studio.example`;
      const authorizationCode = await confirmCode(t, codeFlow, codeEmail, await requestCode(t, codeFlow, codeEmail));
      const startOnly = await startFlow(t);
      const tokens = await signIn(t, `holder-${randomBytes(3).toString('hex')}@studio.example`);
      // Console BFF: a pending sign-in ready for its callback, and a signed-in console session.
      const pending = await consoleStart(t);
      const redirectTo = await signInAtAuthHost(t, pending.authorizeUrl, 'pending@studio.example');
      const consoleSession = await consoleSignIn(t, 'admin@studio.example');
      const before = await writes(w, null);
      const mails = t.smtp.messages.length;

      const calls: Record<string, () => PromiseLike<Response>> = {
        ...managementCalls(w, player, newcomer),
        'GET authorize': () =>
          t
            .auth()
            .get('/management-auth/authorize')
            .query(authorizeQuery(t, pkcePair(), randomBytes(16).toString('base64url'))),
        'POST email/start': () => emailPost(t, 'start', startOnly, { email: 'outage-start@studio.example' }),
        'POST email/confirm': () => emailPost(t, 'confirm', confirmFlow, { email: confirmEmail, code: emailCode }),
        'POST token (code)': () =>
          tokenRequest(t, {
            grant_type: 'authorization_code',
            code: authorizationCode,
            redirect_uri: callbackUri(t),
            code_verifier: codeFlow.pkce.verifier,
          }),
        'POST token (refresh)': () =>
          tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
        'GET current': () =>
          t.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`),
        'POST revoke': () =>
          t.auth().post('/management-auth/revoke').set('Authorization', `Bearer ${tokens.access_token}`),
        'POST /api/auth/sign-out': () =>
          t.console().post('/api/auth/sign-out').set('Cookie', consoleSession.cookie).set('Origin', t.consoleOrigin),
        'GET /api/management/tenants': () =>
          t.console().get('/api/management/tenants').set('Cookie', consoleSession.cookie),
        'POST /api/management/…/clients': () =>
          t
            .console()
            .post(`/api/management/tenants/acme/clients`)
            .set('Cookie', consoleSession.cookie)
            .set('Origin', t.consoleOrigin)
            .send({
              name: 'Via BFF',
              type: 'browser',
              scopes: ['openid'],
              redirect_uris: ['https://bff.acme.example/auth'],
              web_origins: [],
            }),
      };

      await env.cut();

      try {
        const names = Object.keys(calls);
        const answers: Record<string, unknown> = {};
        for (const n of names) answers[n] = refusal(await (calls[n] as () => PromiseLike<Response>)());
        expect(answers).toEqual(
          Object.fromEntries(
            names.map((n) => [
              n,
              n in servedWithout
                ? { status: servedWithout[n], error: undefined, token: undefined, session: undefined }
                : REFUSED,
            ]),
          ),
        );
        // The BFF callback answers by redirect: to the error, with no console session.
        const callback = await consoleCallback(t, redirectTo, pending.flowCookie);
        expect({
          status: callback.status,
          location: callback.headers.location,
          session: setCookieLine(callback, CONSOLE_COOKIE),
        }).toEqual({
          status: 303,
          location: '/?error=temporarily_unavailable',
          session: undefined,
        });
      } finally {
        await env.back();
      }
      await eventually(async () => (await t.auth().get('/readyz')).status === 200, 10_000);
      expect(t.smtp.messages.length).toBe(mails + ('POST email/start' in servedWithout ? 1 : 0));
      expect(await writes(w, outage)).toEqual(before);

      // Back: the session, its refresh token and the console session were kept.
      await calls['GET current']!().then((r) => expect(r.status).toBe(200));
      await calls['GET /api/management/tenants']!().then((r) => expect(r.status).toBe(200));
      const refreshed = await calls['POST token (refresh)']!();
      expect(refreshed.status).toBe(200);
      await calls['POST email/start']!().then((r) => expect(r.status).toBe(202));
      await calls['GET authorize']!().then((r) => expect(r.status).toBe(200));
      await calls['PATCH client']!().then((r) => expect(r.status).toBe(200));
      await calls['POST clients']!().then((r) => expect(r.status).toBe(201));
      await calls['POST /api/management/…/clients']!().then((r) => expect(r.status).toBe(201));
      await calls['POST members']!().then((r) => expect(r.status).toBe(201));
      await calls['DELETE member']!().then((r) => expect(r.status).toBe(200));
      await calls['POST deactivate']!().then((r) => expect(r.status).toBe(200));
      await calls['DELETE user']!().then((r) => expect(r.status).toBe(200));
      await calls['GET audit']!().then((r) => expect(r.status).toBe(200));
      await calls['POST /api/auth/sign-out']!().then((r) => expect(r.status).toBe(204));
      await t
        .auth()
        .post('/management-auth/revoke')
        .set('Authorization', `Bearer ${refreshed.body.access_token as string}`)
        .expect(200);
      // A fresh sign-in, through the console as well, works without a restart.
      const again = await consoleSignIn(t, 'after-outage@studio.example');
      await t.console().get('/api/auth/current').set('Cookie', again.cookie).expect(200);
    });
  });
}

describeOutage('control plane, console BFF and management API with Redis stalled', async () => {
  const redis = await PrivateRedis.start();
  const w = await startConsoleTenant({ REDIS_URL: redis.url, DEPENDENCY_TIMEOUT_MS: '500' });
  return {
    w,
    outage: null,
    cut: () => Promise.resolve(redis.pause()),
    back: () => Promise.resolve(redis.resume()),
    end: async () => {
      redis.resume();
      await w.close();
      await redis.stop();
    },
  };
});

/**
 * With PostgreSQL away, `current` answers from the session authority (Redis holds the session, its
 * user's email and deactivation) and `email/start` keeps its code in Redis and answers 202 whether
 * or not the address is known: neither needs the database, and neither issues a token. The code it
 * sends leads to a token only through `email/confirm` and `token`, which answer 503.
 */
describeOutage(
  'control plane, console BFF and management API with PostgreSQL refusing connections',
  async () => {
    // Rows of the console client are trusted for 100 ms only, so every Basic check needs the database.
    const w = await startConsoleTenant({ CLIENT_CACHE_TTL_MS: '100' });
    const outage = await PostgresOutage.of(w.t.databaseName);
    return {
      w,
      outage,
      cut: async () => {
        await outage.cut();
        await new Promise((r) => setTimeout(r, 250));
      },
      back: () => outage.restore(),
      end: async () => {
        await outage.end();
        await w.close();
      },
    };
  },
  { 'GET current': 200, 'POST email/start': 202 },
);
