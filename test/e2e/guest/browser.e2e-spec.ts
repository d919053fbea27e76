import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { SCREENSHOTS, startGameWorld, watchProblems, type GameWorld } from '../../browser/game-world';
import { eventually } from '../../support/eventually';
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
    // The player is signed in at the platform; the game's link goes through the auth host's
    // bounce, which binds the flow to this browser (issue 22, finding 2), to the consent page.
    await context.addCookies([w.chat.browserSession({ id: '9001', username: 'star_player', global_name: null })]);
    await page.locator('#chat').click();
    await page.waitForURL((url) => url.toString().startsWith(w.chat.authorizeUrl));
    expect(new URL(page.url()).searchParams.has('prompt')).toBe(false);
    const binding = (await context.cookies(w.t.authOrigin)).find((c) => c.name.startsWith('__Host-svc_chat_'));
    // First-party on the auth host (no partition), so the platform's redirect carries it back.
    expect(binding).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
    expect(binding?.partitionKey).toBeUndefined();
    await page.locator('#approve').click();
    await status().filter({ hasText: 'Saved: chat account is attached to' }).waitFor();
    expect(await userId()).toBe(guestId);
    // The proof came in the query (contract section 6) and the game took it off the address.
    expect(new URL(page.url()).search).toBe('');
    expect((await context.cookies(w.t.authOrigin)).filter((c) => c.name.startsWith('__Host-svc_chat_'))).toEqual([]);
    await shot('03-upgraded-by-chat');
    const identity = await w.t.pg.query(`SELECT user_id FROM identities WHERE provider_subject = '9001'`);
    expect(identity.rows).toEqual([{ user_id: guestId }]);
    expect(problems).toEqual([]);
  });

  it('a victim who follows an attacker’s chat link never proves its account into the attacker’s flow (issue 22, finding 2)', async () => {
    // The victim plays the game, is signed in at the chat platform and authorized the game before.
    const victimId = await playAsGuest();
    const victimChat = { id: '9002', username: 'victim', global_name: null, email: 'victim@example.com' };
    await context.addCookies([w.chat.browserSession(victimChat, { authorized: true })]);
    const owned = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE provider_subject = '9002'`);
    expect(owned.rows[0].n).toBe(0);

    // The attacker, in a browser of its own, plays the game and takes the chat link its page gets.
    let attackerId = '';
    const attackerContext = await world.browser.newContext();
    try {
      const attackerPage = await attackerContext.newPage();
      await attackerPage.goto(`${game.origin}/`);
      await attackerPage
        .locator('#status')
        .filter({ hasText: /Playing as guest usr_/ })
        .waitFor();
      // It stops at the link its game's chat button opens, and keeps it instead of following it.
      const taken = new Promise<string>((resolve) => {
        void attackerContext.route(`${w.t.authOrigin}/t/acme/chat/go?**`, async (route) => {
          resolve(route.request().url());
          await route.abort();
        });
      });
      await attackerPage.locator('#chat').click();
      const authorizeUrl = await taken;
      await attackerContext.unrouteAll();
      expect(new URL(authorizeUrl).pathname).toBe('/t/acme/chat/go');
      const attackerSaw: string[] = [];
      attackerPage.on('framenavigated', (f) => attackerSaw.push(f.url()));

      // The victim opens the attacker's link. No silent pass-through: the platform asks.
      await page.goto(authorizeUrl);
      await page.waitForURL((url) => url.toString().startsWith(w.chat.authorizeUrl));
      expect(new URL(page.url()).searchParams.has('prompt')).toBe(false);
      await page.locator('#approve').waitFor();
      expect(page.url().startsWith(game.origin)).toBe(false);
      // Tricked into approving anyway, the victim is returned to the game in the victim's own
      // browser; the proof there is bound to the attacker's flow cookie and useless to the victim.
      await page.locator('#approve').click();
      await page.waitForURL((url) => url.toString().startsWith(game.origin));
      await status()
        .filter({ hasText: /invalid_proof|forbidden|Saved/ })
        .waitFor();
      expect(await status().textContent()).not.toMatch(/Saved/);
      expect(await userId()).toBe(victimId);

      // What the attacker has: its link (spent) and its page. Following the link again goes
      // nowhere; nothing came back to its page; its flow holds no proof it can name.
      // From the attacker's browser, but not through its game page, whose aborted navigation to
      // the link may still be settling.
      const again = await attackerContext.request.get(authorizeUrl, { maxRedirects: 0 });
      expect(again.status()).toBe(400);
      expect(attackerSaw.join(' ')).not.toMatch(/proof_id/);
      expect(attackerSaw.join(' ')).not.toMatch(/[?&#]code=/);
      // The aborted navigation to the link may still interrupt a first goto: try until one lands.
      await eventually(async () => (await attackerPage.goto(`${game.origin}/`))?.ok() === true, 10_000);
      await attackerPage
        .locator('#status')
        .filter({ hasText: /Welcome back|Playing as guest/ })
        .waitFor();
      attackerId = (await attackerPage.locator('#user-id').textContent()) as string;
      expect(attackerId).not.toBe(victimId);
      expect(await attackerPage.locator('#account-kind').textContent()).toBe('guest');
    } finally {
      await attackerContext.close();
    }
    // The victim's chat account belongs to no account the attacker holds: at most a provisional
    // user of its own, which only a proof the attacker never saw could attach.
    const rows = await w.t.pg.query(
      `SELECT u.id, u.kind FROM identities i JOIN users u ON u.id = i.user_id WHERE i.provider_subject = '9002'`,
    );
    for (const row of rows.rows as { id: string; kind: string }[]) {
      expect(row.kind).toBe('provisional');
      expect([attackerId, victimId]).not.toContain(row.id);
    }
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

  it('warns a guest while localStorage refuses the session, and stops once it keeps it', async () => {
    // localStorage full for the SDK's session id, as a phone short of space leaves it; the game's
    // own scores still fit. A reload keeps it full; `roomAgain` frees it.
    await context.addInitScript(() => {
      const setItem = Storage.prototype.setItem;
      Storage.prototype.setItem = function (key: string, value: string) {
        if (key.endsWith(':cookie_session') && !(globalThis as { roomAgain?: boolean }).roomAgain)
          throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
        setItem.call(this, key, value);
      };
    });
    const warning = page.locator('#not-saved');
    const guestId = await playAsGuest();
    await warning.waitFor({ state: 'visible' });
    await shot('06-not-saved');
    // The HttpOnly cookie still holds the session: a reload resumes the guest, and warns again.
    await page.reload();
    await status()
      .filter({ hasText: `Welcome back, ${guestId}` })
      .waitFor();
    await warning.waitFor({ state: 'visible' });
    // Room again: the next refresh writes the session id, and the warning goes.
    await page.evaluate('globalThis.roomAgain = true; starClicker.auth.refresh().then(() => undefined)');
    await warning.waitFor({ state: 'hidden' });
    const keys = await page.evaluate<string[]>('Object.keys(localStorage)');
    expect(keys.some((key) => key.endsWith(':cookie_session'))).toBe(true);
    expect(problems).toEqual([]);
  });
});
