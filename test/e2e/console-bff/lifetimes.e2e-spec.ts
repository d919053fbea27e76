import { setTimeout as sleep } from 'node:timers/promises';
import {
  CONSOLE_COOKIE,
  consoleSignIn,
  expiresConsoleCookie,
  readConsoleRecord,
  setCookieLine,
} from '../../support/console-flow';
import { startTestApp, type TestApp } from '../../support/test-app';

/** Spec 2.2 and 8: idle 8 h, absolute 24 h; shortened here (contract section 1). */
describe('console session lifetimes', () => {
  describe('idle lifetime (CONSOLE_SESSION_IDLE_TTL=3)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ RATE_LIMITS: 'off', CONSOLE_SESSION_IDLE_TTL: '3' });
    });
    afterAll(async () => {
      await t.close();
    });

    it('extends on use and ends after the idle time without use: 401, cookie expired', async () => {
      const s = await consoleSignIn(t, 'idle@studio.example');
      expect(await t.redis.ttl(s.recordKey)).toBeLessThanOrEqual(3);
      // Use every 1.5 s for 4.5 s: longer than the idle time, so only use keeps it alive.
      for (let i = 0; i < 3; i++) {
        await sleep(1500);
        await t.console().get('/api/auth/current').set('Cookie', s.cookie).expect(200);
      }
      await sleep(3300);
      const res = await t.console().get('/api/auth/current').set('Cookie', s.cookie).expect(401);
      expect(res.body.error).toBe('unauthorized');
      expect(expiresConsoleCookie(res)).toBe(true);
      expect(await t.redis.exists(s.recordKey)).toBe(0);
    });
  });

  describe('absolute lifetime (CONSOLE_SESSION_ABSOLUTE_TTL=4, idle 3)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ RATE_LIMITS: 'off', CONSOLE_SESSION_IDLE_TTL: '3', CONSOLE_SESSION_ABSOLUTE_TTL: '4' });
    });
    afterAll(async () => {
      await t.close();
    });

    it('sets the cookie Max-Age to the absolute lifetime', async () => {
      const s = await consoleSignIn(t, 'cookie-age@studio.example');
      expect(s.setCookie).toMatch(/; Max-Age=4; /);
    });

    it('ends at the absolute time however busy the session is', async () => {
      const s = await consoleSignIn(t, 'absolute@studio.example');
      const record = await readConsoleRecord(t, s);
      expect((record?.absoluteExpiresAt ?? 0) - (record?.createdAt ?? 0)).toBe(4000);
      while (Date.now() < (record?.absoluteExpiresAt ?? 0) - 700) {
        await t.console().get('/api/auth/current').set('Cookie', s.cookie).expect(200);
        // The idle extension never reaches past the absolute end.
        expect(await t.redis.pttl(s.recordKey)).toBeLessThanOrEqual(
          (record?.absoluteExpiresAt ?? 0) - Date.now() + 1000,
        );
        await sleep(500);
      }
      await sleep(Math.max(0, (record?.absoluteExpiresAt ?? 0) - Date.now() + 100));
      const res = await t.console().get('/api/management/tenants').set('Cookie', s.cookie).expect(401);
      expect(expiresConsoleCookie(res)).toBe(true);
      expect(setCookieLine(res, CONSOLE_COOKIE)).toMatch(/SameSite=Strict/);
    });
  });
});
