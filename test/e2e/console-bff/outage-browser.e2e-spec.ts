import { chromium, type Browser, type Page } from 'playwright-core';
import { signInToConsole } from '../../browser/console-sign-in';
import { watchProblems } from '../../browser/game-world';
import { addMember, createTenant } from '../../support/console-fixtures';
import { eventually } from '../../support/eventually';
import { PrivateRedis } from '../../support/private-redis';
import { startTestApp, type TestApp } from '../../support/test-app';

const EMAIL = 'outage-dev@studio.example';
const UNAVAILABLE = 'The service is temporarily unavailable. Please try again in a moment.';

/**
 * What a person sees in the console page (Chromium) when a dependency is down: the service answers
 * 503 `temporarily_unavailable` (redis-down.e2e-spec.ts), the page says so instead of signing them
 * out, and once Redis is back the same session goes on. Redis is the test's own, stalled with
 * SIGSTOP: a real outage, nothing intercepted in the browser.
 */
describe('console page in Chromium while Redis is unavailable', () => {
  let redis: PrivateRedis;
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    t = await startTestApp({ RATE_LIMITS: 'off', REDIS_URL: redis.url });
    await createTenant(t, 'acme-games', 'Acme Games');
    await addMember(t, 'acme-games', EMAIL, 'owner');
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    page = await (await browser.newContext()).newPage();
    watchProblems(page, problems);
    await signInToConsole(page, t, EMAIL);
  }, 60_000);
  afterAll(async () => {
    redis?.resume();
    await browser?.close();
    await t?.close();
    await redis?.stop();
  });

  it('says the service is unavailable, on load and in a view, and goes on with the same session once Redis is back', async () => {
    await page.getByRole('link', { name: 'Acme Games' }).click();
    await page.getByRole('navigation', { name: 'Tenant' }).waitFor();
    redis.pause();
    try {
      // A view's own call: its answer's words, in the view, while the page stays signed in.
      await page.getByRole('navigation', { name: 'Tenant' }).getByRole('link', { name: 'Audit trail' }).click();
      await page.getByRole('alert').first().waitFor();
      // The server's own description comes first (api.js, describeError).
      expect(await page.getByRole('alert').allTextContents()).toEqual([
        'The service is temporarily unavailable. Retry later.',
      ]);
      expect(await page.locator('#email').textContent()).toBe(EMAIL);

      // A reload: the page cannot tell who is signed in, and says why rather than offering a sign-in.
      await page.reload();
      await page.getByRole('alert').filter({ hasText: UNAVAILABLE }).waitFor();
      expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
    } finally {
      redis.resume();
    }
    // The reconnect backoff is capped at one second; the session cookie was never touched.
    await eventually(async () => {
      await page.reload();
      return (
        (await page
          .locator('#email')
          .textContent({ timeout: 2_000 })
          .catch(() => null)) === EMAIL
      );
    }, 15_000);
    // The reload kept the address: the audit trail, now drawn.
    await page.getByRole('heading', { name: 'Audit trail', exact: true, level: 3 }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    // watchProblems leaves out the browser's own lines for the 503s ("Failed to load resource").
    expect(problems).toEqual([]);
  }, 60_000);
});
