import { join } from 'node:path';
import type { BrowserContext, Page, Request } from 'playwright-core';
import type { GuestClient } from '../../../sdk/src/guest-client';
import { sessionHandleOf } from '../../../src/console-bff/console-sessions.store';
import { signInToConsole } from '../../browser/console-sign-in';
import { SCREENSHOTS, startGameWorld, watchProblems, type GameWorld } from '../../browser/game-world';
import { addMember, createClient } from '../../support/console-fixtures';
import { CONSOLE_COOKIE } from '../../support/console-flow';
import { emailProof, type GuestWorld } from '../../support/guest-fixtures';
import { eventually } from '../../support/eventually';
import type { TestApp } from '../../support/test-app';

const OWNER = 'owner@acme-games.example';
const VIEWER = 'viewer@acme-games.example';
// An address with no place a line may break, as long as a real one can be.
const LONG_EMAIL = 'firstname.lastname.producer@acmegames-studio-europe.example';

/**
 * Issue 26 in a real browser: Debian's Chromium driven by playwright-core through the console page
 * against the real service and BFF (no token in the page, strict CSP: any script error or CSP
 * violation fails a test), with the demo game on sites of its own (test/browser/game-world.ts).
 */
describe('the console manages a tenant, in Chromium', () => {
  let world: GameWorld;
  let w: GuestWorld;
  let t: TestApp;
  let owner: { context: BrowserContext; page: Page };
  const problems: string[] = [];

  beforeAll(async () => {
    world = await startGameWorld();
    ({ w } = world);
    t = w.t;
    await addMember(t, 'acme', OWNER, 'owner');
    owner = await consoleAs(OWNER);
  }, 90_000);
  afterAll(async () => {
    await world?.close();
  });
  afterEach(() => {
    // Each test answers for its own page problems, not an earlier test's.
    const seen = problems.splice(0);
    expect(seen).toEqual([]);
  });

  async function consoleAs(email: string): Promise<{ context: BrowserContext; page: Page }> {
    const context = await world.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    watchProblems(page, problems);
    await signInToConsole(page, t, email);
    return { context, page };
  }

  /** The tenant view through its tab, as a person gets there. */
  async function openView(page: Page, label: string): Promise<void> {
    if (!page.url().includes('#/t/acme')) await page.getByRole('link', { name: 'Acme Games' }).click();
    await page.getByRole('navigation', { name: 'Tenant' }).getByRole('link', { name: label, exact: true }).click();
    await page.getByRole('heading', { name: label, exact: true, level: 3 }).waitFor();
  }

  /** A call from the console page itself: same origin, the session cookie, the exact Origin. */
  function pageCall(page: Page, method: string, path: string, body?: unknown) {
    return page.evaluate(
      async ([m, p, b]) => {
        const res = await fetch(p, {
          method: m,
          headers: { 'Content-Type': 'application/json' },
          body: b === undefined ? undefined : JSON.stringify(b),
        });
        return { status: res.status, body: await res.json().catch(() => null) };
      },
      [method, path, body] as const,
    );
  }

  /** What has keyboard focus: a button's accessible name, a heading's text, or "body" when none. */
  const focused = (page: Page) =>
    page.evaluate<string>(
      `(() => {
        const el = document.activeElement;
        return !el || el === document.body ? 'body' : el.getAttribute('aria-label') || el.textContent.trim();
      })()`,
    );

  /**
   * Plays the demo game at `origin` in a fresh browser and returns the status line it settles on.
   * `disabled`: its client is disabled, so the page cannot play. Within the service's lookup of web
   * origins (CLIENT_CACHE_TTL_MS) the page reads the 400 invalid_client; after it, contract 11 gives
   * a disabled client's origin no CORS headers, and the browser blocks the answers.
   */
  async function playAt(origin: string, disabled = false): Promise<string> {
    const context = await world.browser.newContext();
    try {
      const page = await context.newPage();
      const seen: string[] = [];
      watchProblems(page, seen);
      await page.goto(`${origin}/`);
      const settled = disabled ? /invalid_client|network_error/ : /Playing as guest usr_|invalid_client/;
      const status = page.locator('#status').filter({ hasText: settled });
      await status.waitFor();
      // A refused client is an expected 400, logged as a failed resource and nothing else.
      expect(seen.filter((line) => !(disabled && line.includes('blocked by CORS policy')))).toEqual([]);
      return (await status.textContent()) as string;
    } finally {
      await context.close();
    }
  }

  it('creates a client for a new site, refusing a redirect URI with a fragment in the server’s words; a game on that site creates a guest at once; disable and enable take effect at once', async () => {
    const { page } = owner;
    const config = { tenantId: 'acme', clientId: 'cli_not_created_yet' };
    const game = await world.serveGame(config);
    await openView(page, 'Clients');
    await page.getByRole('button', { name: 'New client' }).click();
    await page.getByLabel('Name').fill('Moon Dash');
    await page.getByLabel('Redirect URIs').fill(`${game.origin}/#play`);
    await page.getByLabel('Web origins').fill(game.origin);

    const refused = page.waitForResponse((r) => r.url().endsWith('/api/management/tenants/acme/clients'));
    await page.getByRole('button', { name: 'Create client' }).click();
    const refusal = await refused;
    expect(refusal.status()).toBe(400);
    const { error_description: words } = (await refusal.json()) as { error_description: string };
    const alert = page.getByRole('form', { name: 'New client' }).getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(words);

    await page.getByLabel('Redirect URIs').fill(`${game.origin}/`);
    const created = page.waitForResponse((r) => r.url().endsWith('/api/management/tenants/acme/clients'));
    await page.getByRole('button', { name: 'Create client' }).click();
    const answer = await created;
    expect(answer.status()).toBe(201);
    const { client } = (await answer.json()) as { client: { client_id: string } };
    await page
      .getByRole('status')
      .filter({ hasText: `Created Moon Dash: ${client.client_id}` })
      .waitFor();
    await page.getByRole('cell', { name: client.client_id, exact: true }).waitFor();

    // No restart and no wait: the new origin is allowed from the next request on.
    config.clientId = client.client_id;
    expect(await playAt(game.origin)).toMatch(/^Playing as guest usr_/);

    // Disabling stops every game using the client, so the page asks first, naming it; Cancel
    // sends nothing and puts the keyboard back on the button.
    const patches: string[] = [];
    const onRequest = (r: Request) => void (r.method() === 'PATCH' && patches.push(r.url()));
    page.on('request', onRequest);
    await page.getByRole('button', { name: 'Disable Moon Dash' }).click();
    const ask = page.getByRole('alertdialog', { name: 'Disable Moon Dash?' });
    expect(await ask.textContent()).toContain(`Games using ${client.client_id} can no longer sign players in`);
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached' });
    expect(await focused(page)).toBe('Disable Moon Dash');
    expect(patches).toEqual([]);
    expect(await playAt(game.origin)).toMatch(/^Playing as guest usr_/);
    await page.getByRole('button', { name: 'Disable Moon Dash' }).click();
    await ask.getByRole('button', { name: 'Disable the client' }).click();
    await page.getByRole('status').filter({ hasText: 'Moon Dash is disabled.' }).waitFor();
    page.off('request', onRequest);
    expect(await playAt(game.origin, true)).toMatch(/^(invalid_client|network_error)/);
    await page.getByRole('button', { name: 'Enable Moon Dash' }).click();
    await page.getByRole('status').filter({ hasText: 'Moon Dash is enabled.' }).waitFor();
    expect(await playAt(game.origin)).toMatch(/^Playing as guest usr_/);

    // Editing keeps what was not touched: only the name changes.
    await page.getByRole('button', { name: 'Edit Moon Dash' }).click();
    await page.getByLabel('Name').fill('Moon Dash Deluxe');
    const saved = page.waitForRequest((r) => r.method() === 'PATCH');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect((await saved).postDataJSON()).toEqual({ name: 'Moon Dash Deluxe' });
    await page.getByRole('status').filter({ hasText: 'Saved Moon Dash Deluxe.' }).waitFor();
    const row = await t.pg.query(`SELECT name, redirect_uris, enabled FROM clients WHERE id = $1`, [client.client_id]);
    expect(row.rows).toEqual([{ name: 'Moon Dash Deluxe', redirect_uris: [`${game.origin}/`], enabled: true }]);
  }, 90_000);

  async function playerWithEmail(email: string): Promise<{ player: GuestClient; userId: string }> {
    const player = w.client();
    const userId = (await player.createGuest()).user_id;
    await player.createLinkingIntent();
    await player.upgrade(await emailProof(w, player, email));
    return { player, userId };
  }

  async function findPlayer(page: Page, query: string): Promise<void> {
    await page.getByLabel('Player id or email').fill(query);
    await page.getByRole('button', { name: 'Find' }).click();
  }

  it('finds a player by email, shows identities and sessions, ends a session (the player’s refresh is then refused), deactivates and erases after a confirmation naming the player', async () => {
    const { page } = owner;
    const { player, userId } = await playerWithEmail('player.one@example.com');
    const { session_id: sessionId } = await player.refresh();

    await openView(page, 'Players');
    await findPlayer(page, 'Player.One@example.com ');
    await page.getByRole('link', { name: `Open ${userId}` }).click();
    await page.getByRole('heading', { name: `player.one@example.com (${userId})` }).waitFor();
    await page.getByText('email: player.one@example.com').first().waitFor();
    await page.getByRole('button', { name: `End session ${sessionId}` }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Session ${sessionId} ended.` })
      .waitFor();
    await expect(player.refresh()).rejects.toMatchObject({ status: 400, code: 'invalid_grant' });
    // The list is read again after the change: the ended session leaves it.
    await page.getByRole('button', { name: `End session ${sessionId}` }).waitFor({ state: 'detached' });

    await page.getByRole('button', { name: 'Deactivate' }).click();
    const deactivate = page.getByRole('alertdialog');
    expect(await deactivate.textContent()).toContain(`Deactivate player.one@example.com (${userId})?`);
    await deactivate.getByRole('button', { name: 'Deactivate the player' }).click();
    await page.getByRole('status').filter({ hasText: 'is deactivated.' }).waitFor();
    const deactivated = await t.pg.query(`SELECT status FROM users WHERE id = $1`, [userId]);
    expect(deactivated.rows[0].status).not.toBe('active');
    // The search results above are read again, not left showing the old status.
    const listed = page.locator('tr.player td[data-label="Status"]');
    await eventually(async () => (await listed.textContent()) === deactivated.rows[0].status, 5000);

    const other = await playerWithEmail('player.two@example.com');
    await findPlayer(page, other.userId);
    await page.getByRole('link', { name: `Open ${other.userId}` }).click();
    await page.getByRole('heading', { name: `player.two@example.com (${other.userId})` }).waitFor();
    await page.getByRole('button', { name: 'Erase' }).click();
    const erase = page.getByRole('alertdialog');
    expect(await erase.textContent()).toContain(`Erase player.two@example.com (${other.userId})?`);
    // Cancel changes nothing; the confirmed erase removes the account.
    await erase.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('alertdialog').waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Erase' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Erase the player for good' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `player.two@example.com (${other.userId}) is erased.` })
      .waitFor();
    // The results no longer offer the erased player, and a new search does not find it.
    await page.getByText('No player has that exact id or email.').waitFor();
    await findPlayer(page, 'player.two@example.com');
    await page.getByText('No player has that exact id or email.').waitFor();
    await expect(other.player.refresh()).rejects.toMatchObject({ status: 400 });
  }, 60_000);

  it('shows the audit trail with a type filter and pages older events by next_before', async () => {
    const { page } = owner;
    // More than one page (50) of events, so "Older events" has something to fetch.
    await t.pg.query(
      `INSERT INTO audit_events (type, tenant_id, subject, data)
       SELECT 'session.revoked', 'acme', 'ses_seeded_' || g, '{}' FROM generate_series(1, 55) g`,
    );
    await openView(page, 'Audit trail');
    const rows = page.locator('tr.event');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(50);
    const older = page.waitForRequest((r) => r.url().includes('/audit?before='));
    await page.getByRole('button', { name: 'Older events' }).click();
    await older;
    await rows.nth(50).waitFor();

    await page.getByLabel('Event type').fill('console.client.update');
    await page.getByRole('button', { name: 'Filter' }).click();
    // (Polled from here: the page's CSP refuses the string evaluation waitForFunction would use.)
    const types = page.locator('tr.event td:nth-child(2)');
    await eventually(async () => (await types.allTextContents()).every((x) => x === 'console.client.update'), 5000);
    expect(await rows.count()).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('an owner adds a viewer, who sees the tenant but has no write controls, and whose writes the server refuses with 403', async () => {
    const { page } = owner;
    await openView(page, 'Members');
    await page.getByLabel('Email', { exact: true }).fill(VIEWER);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `${VIEWER} is now viewer.` })
      .waitFor();
    await page.getByRole('cell', { name: VIEWER, exact: true }).waitFor();

    const viewer = await consoleAs(VIEWER);
    try {
      const v = viewer.page;
      await v.getByText('acme · viewer').waitFor();
      await openView(v, 'Clients');
      await v.locator('td[data-label="Client ID"]', { hasText: 'cli_game' }).waitFor();
      await v.getByText('Your role (viewer) can read clients but not change them.').waitFor();
      expect(await v.getByRole('button', { name: /New client|Edit|Disable|Enable/ }).count()).toBe(0);
      const tabs = await v.getByRole('navigation', { name: 'Tenant' }).getByRole('link').allTextContents();
      expect(tabs).toEqual(['Dashboard', 'Clients', 'Audit trail', 'Members']);
      await openView(v, 'Members');
      await v.getByRole('cell', { name: OWNER, exact: true }).waitFor();
      expect(await v.getByRole('button', { name: /Add member|Remove/ }).count()).toBe(0);

      // The page hiding a control is a courtesy; the server is what refuses.
      const create = await pageCall(v, 'POST', '/api/management/tenants/acme/clients', {
        name: 'Sneaky',
        type: 'browser',
        scopes: ['openid'],
        redirect_uris: ['https://sneaky.example/'],
        web_origins: [],
      });
      const disable = await pageCall(v, 'PATCH', '/api/management/tenants/acme/clients/cli_game', { enabled: false });
      const member = await pageCall(v, 'POST', '/api/management/tenants/acme/members', {
        email: 'friend@sneaky.example',
        role: 'owner',
      });
      const players = await pageCall(v, 'GET', '/api/management/tenants/acme/users?q=player.one%40example.com');
      for (const refused of [create, disable, member, players])
        expect(refused).toMatchObject({ status: 403, body: { error: 'forbidden' } });
      const clients = await t.pg.query(`SELECT id, enabled FROM clients WHERE tenant_id = 'acme' AND name = 'Sneaky'`);
      expect(clients.rows).toEqual([]);
      const game = await t.pg.query(`SELECT enabled FROM clients WHERE id = 'cli_game'`);
      expect(game.rows).toEqual([{ enabled: true }]);
    } finally {
      await viewer.context.close();
    }
  }, 60_000);

  it('returns to the sign-in view, saying why, when the console session ends while a page is open', async () => {
    const { context, page } = await consoleAs(OWNER);
    try {
      await openView(page, 'Clients');
      const cookie = (await context.cookies(t.consoleOrigin)).find((c) => c.name === CONSOLE_COOKIE);
      // The server forgets the session (as an idle expiry or a sign-out elsewhere does).
      expect(await t.redis.del(`cs:{${sessionHandleOf(cookie?.value as string)}}`)).toBe(1);
      await page.getByRole('navigation', { name: 'Tenant' }).getByRole('link', { name: 'Audit trail' }).click();
      await page.getByRole('alert').filter({ hasText: 'Your session has ended. Please sign in again.' }).waitFor();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.getByRole('navigation', { name: 'Tenant' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('draws each console view at 1280 and at 390 px, nothing wider than a phone', async () => {
    const { page } = owner;
    const shoot = async (name: string) => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.screenshot({ path: join(SCREENSHOTS, `console-${name}-1280.png`), fullPage: true });
      await page.setViewportSize({ width: 390, height: 844 });
      // The chart follows its box's width; wait until it has been drawn for the phone.
      if (name === 'dashboard')
        await eventually(async () => Number(await page.locator('.chart svg').getAttribute('width')) < 390, 5000);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      await page.screenshot({ path: join(SCREENSHOTS, `console-${name}-390.png`), fullPage: true });
      await page.setViewportSize({ width: 1280, height: 800 });
    };
    await page.goto(`${t.consoleOrigin}/#/`);
    await page.getByRole('heading', { name: 'Your tenants' }).waitFor();
    await shoot('tenants');

    // Four weeks of history before today, as a tenant a month old has; today is what this suite did.
    await t.pg.query(
      `INSERT INTO tenant_daily_stats (tenant_id, day, guests_created, upgrades, sign_ins)
       SELECT 'acme', current_date - d, 40 + round(25 * sin(d / 4.0)) + d, 4 + d % 6, 12 + round(8 * cos(d / 5.0))
       FROM generate_series(1, 29) d`,
    );
    // Today's counters are spread over several rows (shards); their sum is the day's count.
    const today = await t.pg.query(
      `SELECT sum(guests_created)::int AS guests_created, sum(upgrades)::int AS upgrades
       FROM tenant_daily_stats WHERE tenant_id = 'acme' AND day = current_date`,
    );
    expect(today.rows[0].guests_created).toBeGreaterThan(0);
    expect(today.rows[0].upgrades).toBeGreaterThan(0);
    await page.getByRole('link', { name: 'Acme Games' }).click();
    const chart = page.getByRole('img', { name: /Guests created, upgrades and sign-ins per day/ });
    await chart.waitFor();
    // 30 points a series, today's last, and the page's totals are the days' sums.
    expect(await chart.locator('.guests circle').count()).toBe(30);
    const days = await pageCall(page, 'GET', '/api/management/tenants/acme/stats?days=30');
    const sum = (days.body as { days: Array<{ guests_created: number }> }).days.reduce(
      (n, d) => n + d.guests_created,
      0,
    );
    expect(await page.locator('.totals .guests .total-number').textContent()).toBe(String(sum));
    await shoot('dashboard');

    await openView(page, 'Clients');
    await page.locator('td[data-label="Client ID"]', { hasText: 'cli_game' }).waitFor();
    await shoot('clients');

    const { userId } = await playerWithEmail('player.three@example.com');
    await openView(page, 'Players');
    await findPlayer(page, 'player.three@example.com');
    await page.getByRole('link', { name: `Open ${userId}` }).click();
    await page.getByRole('heading', { name: `player.three@example.com (${userId})` }).waitFor();
    await shoot('players');

    await openView(page, 'Audit trail');
    await page.locator('tr.event').first().waitFor();
    await shoot('audit');

    await openView(page, 'Members');
    await page.getByRole('cell', { name: OWNER, exact: true }).waitFor();
    await shoot('members');
  }, 60_000);

  it('keeps keyboard focus in place: a button busy with its call gets it back, a cancelled confirmation returns it to the button that asked, a change that removes the button hands it to the view’s heading', async () => {
    const { page } = owner;
    await addMember(t, 'acme', 'leaving@acme-games.example', 'viewer');
    await openView(page, 'Members');
    // (Chromium drops focus to the body when the focused button is disabled for the call.)
    await page.getByLabel('Email', { exact: true }).fill('keyboard@acme-games.example');
    await page.getByRole('button', { name: 'Add member' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'keyboard@acme-games.example is now viewer.' }).waitFor();
    await eventually(async () => (await focused(page)) === 'Add member', 2000);

    await page.getByRole('button', { name: 'Remove leaving@acme-games.example' }).focus();
    await page.keyboard.press('Enter');
    expect(await focused(page)).toBe('Cancel');
    await page.keyboard.press('Enter');
    await page.getByRole('alertdialog').waitFor({ state: 'detached' });
    expect(await focused(page)).toBe('Remove leaving@acme-games.example');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'leaving@acme-games.example is no longer a member.' }).waitFor();
    await eventually(async () => (await focused(page)) === 'Members', 2000);

    // Paging the trail from the keyboard: Enter on "Older events" again and again.
    await t.pg.query(
      `INSERT INTO audit_events (type, tenant_id, subject, data)
       SELECT 'session.revoked', 'acme', 'ses_paged_' || g, '{}' FROM generate_series(1, 110) g`,
    );
    await openView(page, 'Audit trail');
    const rows = page.locator('tr.event');
    await rows.nth(49).waitFor();
    await page.getByRole('button', { name: 'Older events' }).focus();
    await page.keyboard.press('Enter');
    await rows.nth(99).waitFor();
    await eventually(async () => (await focused(page)) === 'Older events', 2000);
    await page.keyboard.press('Enter');
    await rows.nth(149).waitFor();
  }, 60_000);

  it('offers what the role allows now: an owner who makes themself admin loses the owner controls at once, and a role lowered elsewhere hides the controls with the first refusal', async () => {
    await addMember(t, 'acme', 'second.owner@acme-games.example', 'owner');
    const second = await consoleAs('second.owner@acme-games.example');
    try {
      const page = second.page;
      await openView(page, 'Members');
      await page.getByLabel('Email', { exact: true }).fill('second.owner@acme-games.example');
      await page.getByLabel('Role', { exact: true }).selectOption('admin');
      await page.getByRole('button', { name: 'Add member' }).click();
      await page.getByRole('status').filter({ hasText: 'second.owner@acme-games.example is now admin.' }).waitFor();
      await page.locator('.badge.role', { hasText: 'admin' }).waitFor();
      await page.getByText('Only owners add and remove members.').waitFor();
      expect(await page.getByRole('button', { name: /Add member|Remove/ }).count()).toBe(0);

      // Another owner makes this member a viewer; the page learns it from the refusal.
      await openView(page, 'Clients');
      await t.pg.query(
        `UPDATE memberships SET role = 'viewer' WHERE tenant_id = 'acme' AND user_id =
           (SELECT user_id FROM identities WHERE email = 'second.owner@acme-games.example' AND tenant_id <> 'acme')`,
      );
      await page.getByRole('button', { name: 'Disable Star Clicker' }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Disable the client' }).click();
      await page.getByRole('alert').filter({ hasText: 'The viewer role may not do this' }).waitFor();
      await page.getByText('Your role (viewer) can read clients but not change them.').waitFor();
      expect(await page.getByRole('button', { name: /New client|Edit|Disable|Enable/ }).count()).toBe(0);
      const tabs = await page.getByRole('navigation', { name: 'Tenant' }).getByRole('link').allTextContents();
      expect(tabs).toEqual(['Dashboard', 'Clients', 'Audit trail', 'Members']);
    } finally {
      await second.context.close();
    }
  }, 60_000);

  it('fits a long client name and a long address in its notices and confirmations at 390 px', async () => {
    const { page } = owner;
    await createClient(t, 'acme', { id: 'cli_long_name', name: 'com.acmegames.moondash.production.android.release' });
    await addMember(t, 'acme', LONG_EMAIL, 'viewer');
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const width = () => page.evaluate<number>('document.documentElement.scrollWidth');
      await openView(page, 'Clients');
      await page.getByRole('button', { name: 'Disable com.acmegames.moondash.production.android.release' }).click();
      await page.getByRole('alertdialog').getByRole('button', { name: 'Disable the client' }).click();
      await page.getByRole('status').filter({ hasText: 'is disabled.' }).waitFor();
      expect(await width()).toBeLessThanOrEqual(390);

      await openView(page, 'Members');
      await page.getByRole('button', { name: `Remove ${LONG_EMAIL}` }).click();
      await page.getByRole('alertdialog').waitFor();
      expect(await width()).toBeLessThanOrEqual(390);
      await page.screenshot({ path: join(SCREENSHOTS, 'console-confirm-390.png'), fullPage: true });
      await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  }, 60_000);
});
