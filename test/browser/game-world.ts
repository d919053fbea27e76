import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startGameServer } from '../../scripts/game-server';
import { ClientsRepository } from '../../src/directory/clients.repository';
import { startGuestWorld, type GuestWorld } from '../support/guest-fixtures';

const ROOT = join(__dirname, '..', '..');
export const SCREENSHOTS = join(ROOT, 'test-output', 'screenshots');

/** The service, the demo game on a site of its own, and Debian's Chromium to play it. */
export interface GameWorld {
  readonly w: GuestWorld;
  readonly game: { readonly origin: string };
  readonly browser: Browser;
  /**
   * Another copy of the demo game on a site of its own. Its config is read at each page load, so a
   * test may set `clientId` once it knows it (a client created during the test).
   */
  serveGame(config: { tenantId: string; clientId: string }): Promise<{ readonly origin: string }>;
  close(): Promise<void>;
}

/**
 * Contract section 11 in a real browser: Debian's Chromium (never a downloaded browser) driven by
 * playwright-core through the demo game (demo/game/), served on http://127.0.0.1:<port> while the
 * API is http://localhost:<port>: another site, so every call is a credentialed CORS request and
 * the flow cookie is a partitioned third-party cookie. The game uses the SDK package as built.
 * `provider`: the tenant's OpenID Connect provider the game offers a button for.
 */
export async function startGameWorld(
  overrides: Record<string, string> = {},
  provider?: { id: string; name: string },
): Promise<GameWorld> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const sdkDir = mkdtempSync(join(tmpdir(), 'sdk-dist-'));
  execFileSync(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(ROOT, 'sdk/tsconfig.json'), '--outDir', sdkDir]);
  const w = await startGuestWorld({ RATE_LIMITS: 'off', ...overrides });
  const game = await startGameServer({
    sdkDir,
    config: { baseUrl: w.t.authOrigin, tenantId: 'acme', clientId: 'cli_web', ...(provider ? { provider } : {}) },
  });
  // The game's page is the client's redirect URI, so its origin is a web origin (contract 11).
  await w.t.app.get(ClientsRepository).insert({
    id: 'cli_web',
    tenantId: 'acme',
    name: 'Star Clicker',
    type: 'browser',
    enabled: true,
    scopes: ['openid', 'offline_access'],
    redirectUris: [`${game.origin}/`],
    secretDigest: null,
  });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const moreGames: Array<{ close(): Promise<void> }> = [];
  return {
    w,
    game,
    browser,
    async serveGame(config) {
      // The same object, not a copy: the server serialises it on each /config.json request.
      const more = await startGameServer({ sdkDir, config: Object.assign(config, { baseUrl: w.t.authOrigin }) });
      moreGames.push(more);
      return more;
    },
    async close() {
      await browser.close();
      await Promise.all(moreGames.map((g) => g.close()));
      await game.close();
      await w.close();
      rmSync(sdkDir, { recursive: true, force: true });
    },
  };
}

/**
 * Collects what fails a test on a page: script errors, CSP violations, CORS refusals. (A status the
 * flow expects, such as a 409, is logged by Chromium as "Failed to load resource" and is not one.)
 */
export function watchProblems(page: Page, problems: string[]): void {
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
}
