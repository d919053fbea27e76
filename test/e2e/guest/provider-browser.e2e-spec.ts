import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { SCREENSHOTS, startGameWorld, watchProblems, type GameWorld } from '../../browser/game-world';
import type { GuestWorld } from '../../support/guest-fixtures';
import { TestIssuer } from '../../support/oidc-issuer';
import { addProvider } from '../../support/provider-fixtures';

const PROVIDER = { id: 'demo-oidc', name: 'Demo OpenID provider' };
const ACCOUNT = { sub: 'demo-player', email: 'demo.player@example.com', email_verified: true };

/**
 * The demo game's provider button in Chromium (contract 14, browser flow): a real OpenID Connect
 * issuer (oidc-provider, with the demo's login page) registered with `provider add`; the page on
 * another site than the API, the issuer on a third origin.
 */
describe('a game on another site, in Chromium: sign in with an OpenID Connect provider', () => {
  let world: GameWorld;
  let w: GuestWorld;
  let game: { origin: string };
  let issuer: TestIssuer;
  let secretDir: string;
  const contexts: BrowserContext[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    world = await startGameWorld({}, PROVIDER);
    ({ w, game } = world);
    issuer = await TestIssuer.start(
      [
        {
          client_id: 'demo-oidc-app',
          client_secret: 'demo-oidc-secret',
          redirect_uris: [`${w.t.authOrigin}/t/acme/providers/callback`],
        },
      ],
      undefined,
      { name: PROVIDER.name },
    );
    await issuer.setAccount(ACCOUNT);
    secretDir = mkdtempSync(join(tmpdir(), 'svc-provider-browser-'));
    const secretFile = join(secretDir, 'secret');
    writeFileSync(secretFile, 'demo-oidc-secret\n', { mode: 0o600 });
    const added = await addProvider(w, PROVIDER.id, issuer.issuer, 'demo-oidc-app', '--client-secret-file', secretFile);
    expect(added.status).toBe(0);
  }, 90_000);
  afterAll(async () => {
    await Promise.all(contexts.map((c) => c.close()));
    await issuer?.stop();
    await world?.close();
    if (secretDir) rmSync(secretDir, { recursive: true, force: true });
  });

  /** A browser of its own (no cookies, no storage) on the game's page; script errors fail the test. */
  async function freshPage(): Promise<Page> {
    const context = await world.browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    watchProblems(page, problems);
    await page.goto(`${game.origin}/`);
    await page
      .locator('#status')
      .filter({ hasText: /Playing as guest usr_/ })
      .waitFor();
    return page;
  }

  /** The provider button, the issuer's login page (checked and clicked), and back to the game. */
  async function signInAtIssuer(page: Page, shot: string): Promise<void> {
    await page.getByRole('button', { name: `Sign in with ${PROVIDER.name}` }).click();
    await page.waitForURL((url) => url.origin === issuer.issuer);
    expect(await page.locator('#signing-in').textContent()).toBe(
      `You are signing in at ${PROVIDER.name} as ${ACCOUNT.email}.`,
    );
    await page.screenshot({ path: join(SCREENSHOTS, `provider-${shot}.png`), fullPage: true });
    await page.locator('#continue').click();
    await page.waitForURL((url) => url.origin === game.origin);
  }

  it('upgrades the guest in place, keeping its user id and stars, then signs in to it from another browser', async () => {
    const page = await freshPage();
    const guestId = (await page.locator('#user-id').textContent()) as string;
    expect(guestId).toMatch(/^usr_/);
    await page.locator('#play').click();
    await page.locator('#play').click();
    await page.locator('#score', { hasText: '2' }).waitFor();

    await signInAtIssuer(page, '01-issuer-login');
    // The provider's subject names the account; the verified email comes with the upgrade's answer.
    const attached = `${PROVIDER.name} account ${ACCOUNT.sub}`;
    await page
      .locator('#status')
      .filter({ hasText: `Saved: ${attached} (${ACCOUNT.email}) is attached to ${guestId}.` })
      .waitFor();
    // The proof came in the query and the game took it off the address.
    expect(new URL(page.url()).search).toBe('');
    expect(await page.locator('#user-id').textContent()).toBe(guestId);
    expect(await page.locator('#account-kind').textContent()).toBe('account');
    expect(await page.locator('#score').textContent()).toBe('2');
    // The linked identity, as `GET me` lists it.
    await page.locator('#identities', { hasText: attached }).waitFor();
    expect(await page.locator('#identities').textContent()).toBe(attached);
    await page.screenshot({ path: join(SCREENSHOTS, 'provider-02-upgraded.png'), fullPage: true });
    const identity = await w.t.pg.query(
      `SELECT i.user_id, i.email, u.kind FROM identities i JOIN users u ON u.id = i.user_id
        WHERE i.provider = $1 AND i.provider_subject = $2`,
      [PROVIDER.id, ACCOUNT.sub],
    );
    expect(identity.rows).toEqual([{ user_id: guestId, email: ACCOUNT.email, kind: 'regular' }]);

    // Another browser: a new guest there; the same provider account signs in to the first player.
    const other = await freshPage();
    const otherGuestId = (await other.locator('#user-id').textContent()) as string;
    expect(otherGuestId).not.toBe(guestId);
    await signInAtIssuer(other, '03-issuer-login-again');
    await other.locator('#status').filter({ hasText: 'identity_in_use' }).waitFor();
    expect(await other.locator('#user-id').textContent()).toBe(otherGuestId);
    // The refused proof is kept: signing in needs no second visit to the provider.
    await other.getByRole('button', { name: 'Sign in to that account instead' }).click();
    await other
      .locator('#status')
      .filter({ hasText: `Signed in as ${guestId}.` })
      .waitFor();
    expect(await other.locator('#user-id').textContent()).toBe(guestId);
    expect(await other.locator('#account-kind').textContent()).toBe('account');
    await other.locator('#identities', { hasText: attached }).waitFor();
    await other.screenshot({ path: join(SCREENSHOTS, 'provider-04-signed-in.png'), fullPage: true });
    // Nothing was merged: the second browser's guest is left as it was, without the identity.
    const left = await w.t.pg.query(
      `SELECT u.kind, count(i.*)::int AS identities FROM users u LEFT JOIN identities i ON i.user_id = u.id
        WHERE u.id = $1 GROUP BY u.kind`,
      [otherGuestId],
    );
    expect(left.rows).toEqual([{ kind: 'guest', identities: 0 }]);
    // The first browser is still signed in to the same player.
    await page.reload();
    await page
      .locator('#status')
      .filter({ hasText: `Welcome back, ${guestId}.` })
      .waitFor();
    await page.locator('#identities', { hasText: attached }).waitFor();
    expect(problems).toEqual([]);
  });
});
