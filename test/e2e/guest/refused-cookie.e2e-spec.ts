import { join } from 'node:path';
import type { BrowserContext, Request, Response } from 'playwright-core';
import { SCREENSHOTS, startGameWorld, watchProblems, type GameWorld } from '../../browser/game-world';
import { eventually } from '../../support/eventually';

/** The demo runs the SDK in cookie mode: the refresh token lives in this HttpOnly cookie (issue 22). */
const REFRESH_COOKIE = '__Host-svc_refresh_acme.cli_web';
const TOKEN_ENDPOINTS = new Set(['/t/acme/token', '/t/acme/guest', '/t/acme/guest/upgrade', '/t/acme/sign-in']);
/** Seconds: the SDK renews at 80 %, so the first timed refresh comes 2.4 s after guest creation. */
const ACCESS_TTL = 3;

type PageGlobals = typeof globalThis & {
  starClicker: { auth: { me(): Promise<{ id: string }>; readonly userId: string | null } };
};

/**
 * A browser that refuses third-party cookies (Safari's default) on a game page of another site
 * than the auth host never stores the service's refresh cookie. Chromium keeps partitioned (CHIPS)
 * cookies even with third-party cookies blocked, so the test refuses the cookie itself: the answers'
 * `Set-Cookie` of the refresh cookie are taken out before Chromium reads them (DevTools' Fetch
 * domain, at the response stage: the request still goes out as the page sent it, with its flow
 * cookie). The SDK then refreshes with the token of the last answer's body, held in memory.
 */
describe('a browser that refuses the refresh cookie keeps the guest for the page’s life (Chromium)', () => {
  let world: GameWorld;
  let context: BrowserContext;

  beforeAll(async () => {
    world = await startGameWorld({ GUEST_ACCESS_TOKEN_TTL: String(ACCESS_TTL) });
  }, 90_000);
  afterAll(async () => {
    await world?.close();
  });
  afterEach(async () => {
    await context?.close();
  });

  /**
   * The token-set calls reach the service as the page sent them, cookie-less as from a browser
   * that stored no refresh cookie (the test's fetch, as `route.fetch` would keep the answer's
   * cookies in the context), and their answers reach the page without the refresh cookie's
   * `Set-Cookie`, so Chromium never stores it.
   */
  async function refuseRefreshCookie(): Promise<void> {
    await context.route(
      (url) => url.origin === world.w.t.authOrigin && ['/t/acme/guest', '/t/acme/token'].includes(url.pathname),
      async (route) => {
        const request = route.request();
        if (request.method() !== 'POST') return route.continue();
        const answer = await fetch(request.url(), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Origin: world.game.origin },
          body: request.postData() ?? '',
        });
        const headers: Record<string, string> = {};
        answer.headers.forEach((value, name) => {
          if (name !== 'set-cookie') headers[name] = value;
        });
        const cookies = answer.headers.getSetCookie().filter((c) => !c.startsWith(`${REFRESH_COOKIE}=`));
        if (cookies.length > 0) headers['set-cookie'] = cookies.join('\n');
        await route.fulfill({ status: answer.status, headers, body: Buffer.from(await answer.arrayBuffer()) });
      },
    );
  }

  it('refreshes with the in-memory token after the cookie-less refresh is refused, and warns the page', async () => {
    context = await world.browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    watchProblems(page, problems);
    /** Token requests in order: `cookie` (none in the body) or the body's token, with the answer's status. */
    const refreshes: { sent: string; status?: number }[] = [];
    const issued: string[] = [];
    context.on('request', (req: Request) => {
      if (req.method() !== 'POST' || new URL(req.url()).pathname !== '/t/acme/token') return;
      const body = JSON.parse(req.postData() ?? '{}') as { refresh_token?: string };
      refreshes.push({ sent: body.refresh_token ?? 'cookie' });
    });
    context.on('response', (res: Response) => {
      const path = new URL(res.url()).pathname;
      if (res.request().method() !== 'POST' || !TOKEN_ENDPOINTS.has(path)) return;
      if (path === '/t/acme/token') {
        const sent = (JSON.parse(res.request().postData() ?? '{}') as { refresh_token?: string }).refresh_token;
        const entry = refreshes.find((r) => r.status === undefined && r.sent === (sent ?? 'cookie'));
        if (entry) entry.status = res.status();
      }
      res.json().then(
        (body: { refresh_token?: string }) => body.refresh_token && issued.push(body.refresh_token),
        () => undefined,
      );
    });
    await refuseRefreshCookie();

    await page.goto(`${world.game.origin}/`);
    await page
      .locator('#status')
      .filter({ hasText: /Playing as guest usr_/ })
      .waitFor();
    const id = (await page.locator('#user-id').textContent()) as string;
    expect(id).toMatch(/^usr_/);
    // The browser kept no refresh cookie.
    const cookies = (await context.cookies(world.w.t.authOrigin)).map((c) => c.name);
    expect(cookies).not.toContain(REFRESH_COOKIE);

    // Two timed refreshes: the first by cookie is refused (no cookie) and goes on at once with the
    // guest creation's token in the body; the next presents the token that refresh rotated into.
    await eventually(
      () =>
        Promise.resolve(
          issued.length >= 3 && refreshes.filter((r) => r.sent !== 'cookie' && r.status === 200).length >= 2,
        ),
      15_000,
    );
    expect(refreshes.slice(0, 4)).toEqual([
      // The page load: no session to resume yet.
      { sent: 'cookie', status: 400 },
      // The first timed refresh, a guest-losing one before: no cookie came with it.
      { sent: 'cookie', status: 400 },
      { sent: issued[0], status: 200 },
      { sent: issued[1], status: 200 },
    ]);
    expect(refreshes.slice(4).every((r) => r.sent !== 'cookie')).toBe(true);

    // The same player, with a working session, and the page was told it lives in this page alone.
    expect(await page.locator('#user-id').textContent()).toBe(id);
    expect(await page.evaluate(() => (globalThis as PageGlobals).starClicker.auth.userId)).toBe(id);
    expect(await page.evaluate(() => (globalThis as PageGlobals).starClicker.auth.me())).toMatchObject({ id });
    await page.locator('#not-saved').waitFor({ state: 'visible' });
    await page.screenshot({ path: join(SCREENSHOTS, 'refused-cookie-warning.png'), fullPage: true });

    // The token is in no script-readable storage of the page.
    const stored = await page.evaluate(() =>
      [localStorage, sessionStorage].flatMap((s) => Object.keys(s).map((k) => `${k}=${s.getItem(k) ?? ''}`)).join('\n'),
    );
    for (const token of issued) expect(stored).not.toContain(token);
    expect(problems).toEqual([]);
  }, 60_000);
});
