import { setTimeout as sleep } from 'node:timers/promises';
import {
  CONSOLE_COOKIE,
  consoleSignIn,
  expiresConsoleCookie,
  readConsoleRecord,
  setCookieLine,
  type ConsoleSession,
} from '../../support/console-flow';
import { addMember, createTenant } from '../../support/console-fixtures';
import { startSecondInstance, type SecondInstance } from '../../support/console-second-instance';
import { UpstreamSwitch } from '../../support/console-upstream';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * Refresh at expiry (issue 3): management access tokens shortened to 4 s, so the BFF refreshes
 * from 3 s on. Rotations are counted at the authoritative store: every accepted refresh raises
 * the session's generation `gen` in `s:{sid}` by one, so it is the number of refresh grants that
 * succeeded for the session, and a replay would have deleted the session.
 */
describe('console BFF token refresh: single flight across requests and instances (spec 2.2, 3, 7.1)', () => {
  let sw: UpstreamSwitch;
  let t: TestApp;
  let second: SecondInstance;

  beforeAll(async () => {
    sw = await UpstreamSwitch.start();
    t = await startTestApp({
      RATE_LIMITS: 'off',
      AUTH_ORIGIN: sw.origin,
      MANAGEMENT_ACCESS_TOKEN_TTL: '4',
      // What is proven here is single flight, not a deadline: twenty requests of one process
      // polling the lock while the refresh runs can take the hop to the API past the suites'
      // usual second on a loaded machine, and the waiters past their lock's lifetime.
      DEPENDENCY_TIMEOUT_MS: '5000',
    });
    sw.target = t.port;
    second = await startSecondInstance(t);
    await createTenant(t, 'acme', 'Acme');
  });
  afterAll(async () => {
    await second.close();
    await t.close();
    await sw.stop();
  });

  async function signedIn(
    email: string,
  ): Promise<{ s: ConsoleSession; sid: string; accessToken: string; refreshToken: string; accessExpiresAt: number }> {
    await addMember(t, 'acme', email, 'developer');
    const s = await consoleSignIn(t, email);
    const record = await readConsoleRecord(t, s);
    if (!record) throw new Error('no record');
    return {
      s,
      sid: record.sessionId,
      accessToken: record.accessToken,
      refreshToken: record.refreshToken,
      accessExpiresAt: record.accessExpiresAt,
    };
  }
  const rotations = async (sid: string) => Number(await t.redis.hget(`s:{${sid}}`, 'gen'));
  const untilExpired = async (accessExpiresAt: number) => sleep(Math.max(0, accessExpiresAt - Date.now() + 150));
  const tokenGrants = () => sw.requestsTo('/management-auth/token').length;

  it('20 concurrent requests at expiry refresh exactly once, all succeed, and the session lives on', async () => {
    const { s, sid, accessToken, refreshToken, accessExpiresAt } = await signedIn('burst@studio.example');
    await untilExpired(accessExpiresAt);
    const grantsBefore = tokenGrants();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => t.console().get('/api/management/tenants').set('Cookie', s.cookie)),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    for (const r of answers) expect(r.body).toEqual({ tenants: [{ id: 'acme', name: 'Acme', role: 'developer' }] });
    expect(tokenGrants() - grantsBefore).toBe(1);
    expect(await rotations(sid)).toBe(1);
    const after = await readConsoleRecord(t, s);
    expect(after?.accessToken).not.toBe(accessToken);
    expect(after?.refreshToken).not.toBe(refreshToken);
    expect(after?.sessionId).toBe(sid);
    expect(await t.redis.exists(`${s.recordKey}:lock`)).toBe(0);
    await t.console().get('/api/auth/current').set('Cookie', s.cookie).expect(200);
  });

  it('keeps refreshing through several expiries, each time once', async () => {
    const { s, sid, accessExpiresAt } = await signedIn('chain@studio.example');
    let expiresAt = accessExpiresAt;
    for (let round = 1; round <= 2; round++) {
      await untilExpired(expiresAt);
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => t.console().get('/api/auth/current').set('Cookie', s.cookie)),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(5).fill(200));
      expect(await rotations(sid)).toBe(round);
      expiresAt = (await readConsoleRecord(t, s))?.accessExpiresAt ?? 0;
    }
  });

  it('two instances sharing Redis refresh one session once between them', async () => {
    const { s, sid, accessExpiresAt } = await signedIn('two-instances@studio.example');
    await untilExpired(accessExpiresAt);
    const grantsBefore = tokenGrants();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? t.console().get('/api/management/tenants').set('Cookie', s.cookie)
          : second.get('/api/management/tenants').set('Cookie', s.cookie),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(tokenGrants() - grantsBefore).toBe(1);
    expect(await rotations(sid)).toBe(1);
    await second.get('/api/auth/current').set('Cookie', s.cookie).expect(200);
    await t.console().get('/api/auth/current').set('Cookie', s.cookie).expect(200);
  });

  it('refreshes before expiry, not only after it', async () => {
    const { s, sid, accessToken } = await signedIn('early@studio.example');
    const record = await readConsoleRecord(t, s);
    await sleep(Math.max(0, (record?.refreshAt ?? 0) - Date.now() + 50));
    expect(Date.now()).toBeLessThan(record?.accessExpiresAt ?? 0);
    await t.console().get('/api/auth/current').set('Cookie', s.cookie).expect(200);
    expect((await readConsoleRecord(t, s))?.accessToken).not.toBe(accessToken);
    expect(await rotations(sid)).toBe(1);
  });

  it.each([['fail-503'], ['reset']] as const)(
    'keeps the session when the refresh meets a transient API failure (%s): 503, then recovers',
    async (mode) => {
      const { s, sid, refreshToken, accessExpiresAt } = await signedIn(`transient-${mode}@studio.example`);
      await untilExpired(accessExpiresAt);
      sw.mode = mode;
      try {
        const answers = await Promise.all(
          Array.from({ length: 5 }, () => t.console().get('/api/management/tenants').set('Cookie', s.cookie)),
        );
        for (const res of answers) {
          expect(res.status).toBe(503);
          expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
          expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
        }
      } finally {
        sw.mode = 'pass';
      }
      expect((await readConsoleRecord(t, s))?.refreshToken).toBe(refreshToken);
      await t.console().get('/api/management/tenants').set('Cookie', s.cookie).expect(200);
      expect(await rotations(sid)).toBe(1);
    },
  );

  it('drops the session when the API refuses the refresh (400 invalid_grant): 401, record cleared, cookie expired', async () => {
    const { s, accessToken, accessExpiresAt } = await signedIn('refused@studio.example');
    // The control-plane session ends at the API; the console does not know yet.
    await t.auth().post('/management-auth/revoke').set('Authorization', `Bearer ${accessToken}`).expect(200);
    await untilExpired(accessExpiresAt);
    const mark = sw.seen.length;
    const res = await t.console().get('/api/management/tenants').set('Cookie', s.cookie).expect(401);
    expect(res.body.error).toBe('unauthorized');
    expect(expiresConsoleCookie(res)).toBe(true);
    // It was the refresh that was refused: the proxied call was never made.
    expect(sw.seen.slice(mark).map((r) => r.path)).toEqual(['/management-auth/token']);
    expect(await t.redis.exists(s.recordKey)).toBe(0);
  });
});
