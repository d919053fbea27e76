import { setTimeout as sleep } from 'node:timers/promises';
import {
  CONSOLE_COOKIE,
  consoleCallback,
  consoleSignIn,
  FLOW_COOKIE,
  readConsoleRecord,
  setCookieLine,
  signInAtAuthHost,
  type ConsoleSession,
} from '../../support/console-flow';
import { eventually } from '../../support/eventually';
import { PostgresOutage } from '../../support/postgres-outage';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * The console BFF's `POST /api/auth/start` and `GET /api/auth/current` while PostgreSQL refuses
 * connections (contract 4 and 10; spec 3 "transient API failure: console session kept").
 *
 * Neither route needs the database: start keeps its pending sign-in in Redis and `current` is
 * answered by the session authority (Redis). So with PostgreSQL away:
 * - start answers its usual 303 to `authorize` with the flow cookie, and no console session; the
 *   authorize page it leads to answers 503, and the same pending sign-in completes once the
 *   database is back (nothing was lost, nothing issued meanwhile);
 * - `current` answers 200 `{user}` for a session whose access token is still fresh, and 503
 *   temporarily_unavailable for one that must refresh first (the token endpoint needs the console
 *   client's row): the cookie is left alone and the record keeps its tokens, so the session
 *   survives and serves again once the database is back.
 */
describe('console BFF start and current with PostgreSQL refusing connections', () => {
  let t: TestApp;
  let outage: PostgresOutage;
  beforeAll(async () => {
    t = await startTestApp({
      RATE_LIMITS: 'off',
      // Access tokens of 4 s: the BFF refreshes from 3 s on, so one session can be due meanwhile.
      MANAGEMENT_ACCESS_TOKEN_TTL: '4',
      // The console client's row is trusted for 100 ms only, so a refresh needs the database.
      CLIENT_CACHE_TTL_MS: '100',
      DEPENDENCY_TIMEOUT_MS: '500',
    });
    outage = await PostgresOutage.of(t.databaseName);
  });
  afterAll(async () => {
    await outage.end();
    await t.close();
  });

  const current = (s: ConsoleSession) => t.console().get('/api/auth/current').set('Cookie', s.cookie);

  it('start answers 303 with a flow cookie and no session; current keeps every session; both serve after', async () => {
    const due = await consoleSignIn(t, 'due@studio.example');
    const dueRecord = await readConsoleRecord(t, due);
    if (!dueRecord) throw new Error('no console record');
    await sleep(Math.max(0, dueRecord.refreshAt - Date.now() + 50));
    const fresh = await consoleSignIn(t, 'fresh@studio.example');
    const freshRecord = await readConsoleRecord(t, fresh);
    const users = (await t.pg.query(`SELECT count(*)::int AS n FROM users`)).rows[0] as unknown;

    await outage.cut();
    await sleep(250);
    let pending: { authorizeUrl: URL; flowCookie: string };
    try {
      const start = await t.console().post('/api/auth/start').set('Origin', t.consoleOrigin);
      const flowLine = setCookieLine(start, FLOW_COOKIE);
      expect({
        status: start.status,
        to: new URL(start.headers.location as string).pathname,
        flowCookie: /HttpOnly/.test(flowLine ?? ''),
        session: setCookieLine(start, CONSOLE_COOKIE),
      }).toEqual({ status: 303, to: '/management-auth/authorize', flowCookie: true, session: undefined });
      pending = {
        authorizeUrl: new URL(start.headers.location as string),
        flowCookie: (flowLine ?? '').split(';')[0] as string,
      };
      // The authorize page it leads to needs the database: refused, no flow of the auth host.
      const page = await t.auth().get(pending.authorizeUrl.pathname + pending.authorizeUrl.search);
      expect({ status: page.status, error: page.body.error, cookie: page.headers['set-cookie'] }).toEqual({
        status: 503,
        error: 'temporarily_unavailable',
        cookie: undefined,
      });

      // A session with a fresh access token: the session authority answers, no token is issued.
      const ok = await current(fresh);
      expect({ status: ok.status, body: ok.body, cookie: ok.headers['set-cookie'] }).toEqual({
        status: 200,
        body: { user: { id: expect.stringMatching(/^usr_/), email: 'fresh@studio.example', email_verified: true } },
        cookie: undefined,
      });
      // A session due for a refresh: 503, and neither the cookie nor the record is touched.
      const refused = await current(due);
      expect({ status: refused.status, error: refused.body.error, cookie: refused.headers['set-cookie'] }).toEqual({
        status: 503,
        error: 'temporarily_unavailable',
        cookie: undefined,
      });
    } finally {
      await outage.restore();
    }
    await eventually(async () => (await t.auth().get('/readyz')).status === 200, 10_000);
    expect(await readConsoleRecord(t, due)).toMatchObject({
      accessToken: dueRecord.accessToken,
      refreshToken: dueRecord.refreshToken,
      sessionId: dueRecord.sessionId,
    });
    expect(await readConsoleRecord(t, fresh)).toEqual(freshRecord);
    expect(await outage.fresh(async (pg) => (await pg.query(`SELECT count(*)::int AS n FROM users`)).rows[0])).toEqual(
      users,
    );

    // Back: both sessions serve (the due one refreshes now), and the pending sign-in completes.
    await current(due).expect(200);
    expect((await readConsoleRecord(t, due))?.refreshToken).not.toBe(dueRecord.refreshToken);
    await current(fresh).expect(200);
    const redirectTo = await signInAtAuthHost(t, pending.authorizeUrl, 'after@studio.example');
    const done = await consoleCallback(t, redirectTo, pending.flowCookie).expect(303);
    expect(done.headers.location).toBe('/');
    const line = setCookieLine(done, CONSOLE_COOKIE);
    expect(line).toBeDefined();
    const after = await t
      .console()
      .get('/api/auth/current')
      .set('Cookie', (line as string).split(';')[0] as string)
      .expect(200);
    expect(after.body.user.email).toBe('after@studio.example');
  });
});
