import Redis from 'ioredis';
import type { Page } from 'playwright-core';
import { startGameWorld, type GameWorld } from '../../browser/game-world';
import { PrivateRedis } from '../../support/private-redis';

/**
 * Contract 13 in Chromium, cookie mode: every page load of a game rotates the session's refresh
 * cookie, and a player may close the tab while that refresh is under way (a slow mobile network).
 * The service rotates anyway; the next visit, after REFRESH_REUSE_INTERVAL, keeps the player only
 * if the browser still took the answer's cookie, which the SDK's `keepalive` fetches ask of it
 * (without them Chromium dropped it in two runs of three on a loaded machine). Redis is the test's
 * own, stalled with SIGSTOP so the refresh is in flight when the tab closes.
 */
describe('a tab closed while its refresh is under way (Chromium, cookie mode)', () => {
  let redis: PrivateRedis;
  let direct: Redis;
  let world: GameWorld;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    direct = new Redis(redis.url);
    world = await startGameWorld({ REDIS_URL: redis.url, REFRESH_REUSE_INTERVAL: '1', DEPENDENCY_TIMEOUT_MS: '5000' });
  }, 90_000);
  afterAll(async () => {
    redis?.resume();
    direct?.disconnect();
    await world?.close();
    await redis?.stop();
  });

  const playerOf = async (page: Page): Promise<string> => {
    await page.goto(`${world.game.origin}/`);
    await page.locator('#user-id', { hasText: /^usr_/ }).waitFor();
    return (await page.locator('#user-id').textContent()) as string;
  };
  /** The generation of the only live session: how often its refresh token rotated. */
  const generation = async (): Promise<string | null> => {
    const key = (await direct.keys('*s:{ses_*')).find((k) => k.endsWith('}'));
    return key === undefined ? null : direct.hget(key, 'gen');
  };

  it('keeps the guest: the next visit, after the reuse interval, is the same player', async () => {
    const context = await world.browser.newContext();
    try {
      const first = await context.newPage();
      const guest = await playerOf(first);
      await first.close();
      const before = await generation();

      redis.pause();
      const closing = await context.newPage();
      const refresh = closing.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/t/acme/token'));
      void closing.goto(`${world.game.origin}/`).catch(() => undefined);
      await refresh;
      await closing.close();
      redis.resume();
      // The service finishes the rotation the closed tab asked for.
      await new Promise((r) => setTimeout(r, 2_500));
      expect(Number(await generation())).toBe(Number(before) + 1);

      const next = await context.newPage();
      expect(await playerOf(next)).toBe(guest);
    } finally {
      await context.close();
    }
  }, 60_000);
});
