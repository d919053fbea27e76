import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { SCREENSHOTS, startGameWorld, watchProblems, type GameWorld } from '../../browser/game-world';
import { emailProof, type GuestWorld } from '../../support/guest-fixtures';

/** The demo game on another site, in Chromium (test/browser/game-world.ts): the guest flows. */
describe('a game on another site, in Chromium: guest, upgrade, sign-in, refresh', () => {
  let world: GameWorld;
  let w: GuestWorld;
  let game: { origin: string };
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    world = await startGameWorld();
    ({ w, game } = world);
    expect(new URL(game.origin).hostname).not.toBe(new URL(w.t.authOrigin).hostname);
  }, 90_000);
  afterAll(async () => {
    await world?.close();
  });

  beforeEach(async () => {
    context = await world.browser.newContext();
    page = await context.newPage();
    problems = [];
    // Any script error, CSP violation or CORS refusal on the page fails the test.
    watchProblems(page, problems);
  });
  afterEach(async () => {
    await context.close();
  });

  const status = () => page.locator('#status');
  const userId = () => page.locator('#user-id').textContent();
  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `game-${name}.png`), fullPage: true });

  async function playAsGuest(): Promise<string> {
    await page.goto(`${game.origin}/`);
    await status()
      .filter({ hasText: /Playing as guest usr_/ })
      .waitFor();
    const id = (await userId()) as string;
    expect(id).toMatch(/^usr_/);
    expect(await page.locator('#account-kind').textContent()).toBe('guest');
    return id;
  }

  async function emailCode(email: string): Promise<void> {
    const after = w.t.smtp.messages.length;
    await page.locator('#send-code').click();
    const code = await w.t.smtp.waitForCode(email, { after });
    await page.locator('#code').fill(code);
    await page.locator('#verify').click();
  }

  it('creates a guest, attaches an email with the code from the mail, and keeps the user id', async () => {
    const guestId = await playAsGuest();
    // The flow cookie is a partitioned third-party cookie of the auth host, hidden from scripts.
    const flow = (await context.cookies(w.t.authOrigin)).find((c) => c.name.startsWith('__Host-svc_flow_flw_'));
    expect(flow).toMatchObject({ httpOnly: true, secure: true, sameSite: 'None', path: '/' });
    // CHIPS: kept in the game site's partition, never shared with another top-level site.
    expect(flow?.partitionKey).toBe(`http://${new URL(game.origin).hostname}`);
    expect(await page.evaluate<string>('document.cookie')).not.toMatch(/svc_flow/);
    await shot('01-guest');

    await page.locator('#email').fill('player.one@example.com');
    await emailCode('player.one@example.com');
    await status().filter({ hasText: 'Saved: player.one@example.com is attached to' }).waitFor();
    expect(await userId()).toBe(guestId);
    expect(await page.locator('#account-kind').textContent()).toBe('account');
    await shot('02-upgraded-by-email');
    const identity = await w.t.pg.query(`SELECT user_id FROM identities WHERE provider_subject = $1`, [
      'player.one@example.com',
    ]);
    expect(identity.rows).toEqual([{ user_id: guestId }]);
    expect(problems).toEqual([]);
  });

  it('attaches a chat-platform account through the platform’s redirect, keeping the user id', async () => {
    const guestId = await playAsGuest();
    await page.locator('#chat').click();
    await page.waitForURL((url) => url.toString().startsWith(w.chat.authorizeUrl));
    const state = new URL(page.url()).searchParams.get('state') as string;
    // The fake platform's consent: the code it would put on its redirect to the callback.
    const code = w.chat.registerUser({ id: '9001', username: 'star_player', global_name: null });
    await page.goto(`${w.t.authOrigin}/t/acme/chat/callback?code=${code}&state=${encodeURIComponent(state)}`);
    await status().filter({ hasText: 'Saved: chat account is attached to' }).waitFor();
    expect(await userId()).toBe(guestId);
    expect(new URL(page.url()).search).toBe('');
    await shot('03-upgraded-by-chat');
    const identity = await w.t.pg.query(`SELECT user_id FROM identities WHERE provider_subject = '9001'`);
    expect(identity.rows).toEqual([{ user_id: guestId }]);
    expect(problems).toEqual([]);
  });

  it('answers 409 identity_in_use for an email another account owns, then signs in to that account', async () => {
    const owner = w.client({ clientId: 'cli_web' });
    const ownerId = (await owner.createGuest()).user_id;
    await owner.createLinkingIntent();
    await owner.upgrade(await emailProof(w, owner, 'taken@example.com'));

    const guestId = await playAsGuest();
    await page.locator('#email').fill('taken@example.com');
    await emailCode('taken@example.com');
    await status().filter({ hasText: 'identity_in_use' }).waitFor();
    expect(await page.locator('#in-use').isVisible()).toBe(true);
    expect(await userId()).toBe(guestId);
    await shot('04-identity-in-use');

    const after = w.t.smtp.messages.length;
    await page.locator('#sign-in').click();
    const code = await w.t.smtp.waitForCode('taken@example.com', { after });
    await page.locator('#code').fill(code);
    await page.locator('#verify').click();
    await status()
      .filter({ hasText: `Signed in as ${ownerId}` })
      .waitFor();
    expect(await userId()).toBe(ownerId);
    expect(await page.locator('#account-kind').textContent()).toBe('account');
    expect(problems).toEqual([]);
  });

  it('after a reload, refreshes the session instead of making a new guest', async () => {
    const guestId = await playAsGuest();
    await page.locator('#play').click();
    await page.locator('#play').click();
    await page.locator('#score', { hasText: '2' }).waitFor();
    await page.reload();
    await status()
      .filter({ hasText: `Welcome back, ${guestId}` })
      .waitFor();
    expect(await userId()).toBe(guestId);
    expect(await page.locator('#score').textContent()).toBe('2');
    expect(await page.locator('#account-kind').textContent()).toBe('guest');
    await shot('05-after-reload');
    expect(problems).toEqual([]);
  });
});
