import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { addMember, createClient, createTenant } from '../../support/console-fixtures';
import { startTestApp, type TestApp } from '../../support/test-app';

const SCREENSHOTS = join(__dirname, '..', '..', '..', 'test-output', 'screenshots');
const EMAIL = 'browser-dev@studio.example';

/**
 * Issue 3 in a real browser: Debian's Chromium (never a downloaded browser) driven by
 * playwright-core through the hosted sign-in form, with the code read from the test SMTP server.
 */
describe('console page in Chromium: sign in, tenants, sign out', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];
  const failedLoads: string[] = [];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    t = await startTestApp({ RATE_LIMITS: 'off' });
    await createTenant(t, 'acme-games', 'Acme Games');
    await createTenant(t, 'blue-moon', 'Blue Moon Studio');
    await createTenant(t, 'not-mine', 'Not Mine');
    await addMember(t, 'acme-games', EMAIL, 'owner');
    await addMember(t, 'blue-moon', EMAIL, 'viewer');
    await createClient(t, 'acme-games', {
      id: 'cli_acme_web',
      name: 'Acme Web Player',
      type: 'browser',
      scopes: ['openid', 'offline_access'],
    });
    await createClient(t, 'acme-games', {
      id: 'cli_acme_ios',
      name: 'Acme Mobile',
      type: 'native',
      scopes: ['openid'],
    });
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    page = await (await browser.newContext()).newPage();
    // Any CSP violation or script error on either host is a failure of the strict-CSP design, and
    // every failed load is recorded; /api/auth/current's 401 while signed out is the expected one.
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('response', (r) => {
      const path = new URL(r.url()).pathname;
      if (r.status() >= 400 && !(r.status() === 401 && path === '/api/auth/current'))
        failedLoads.push(`${r.status()} ${path}`);
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** The page names its own icon, served from its host: browsers otherwise ask for a missing /favicon.ico. */
  const expectIcon = async () => {
    const href = new URL((await page.locator('link[rel="icon"]').getAttribute('href')) ?? '', page.url());
    expect(href.origin).toBe(new URL(page.url()).origin);
    const icon = await page.request.get(href.href);
    expect([icon.status(), icon.headers()['content-type']]).toEqual([200, 'image/svg+xml']);
  };

  const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });

  it('signs in through the hosted form, shows the tenants with their clients, hides every cookie from scripts, and signs out', async () => {
    await page.goto(`${t.consoleOrigin}/`);
    const signIn = page.getByRole('button', { name: 'Sign in' });
    await signIn.waitFor();
    await expectIcon();
    await shot('01-signed-out');

    await signIn.click();
    await page.waitForURL(new RegExp(`^${t.authOrigin}/management-auth/authorize\\?`));
    await expectIcon();
    await page.getByLabel('Email address').fill(EMAIL);
    const after = t.smtp.messages.length;
    await page.getByRole('button', { name: 'Send code' }).click();
    const first = await t.smtp.waitForCode(EMAIL, { after });
    // "Use another email" returns to the address; "Send a new code" replaces the first code.
    await page.getByRole('button', { name: 'Use another email' }).click();
    expect(await page.getByLabel('Email address').isVisible()).toBe(true);
    const again = t.smtp.messages.length;
    await page.getByRole('button', { name: 'Send code' }).click();
    await t.smtp.waitForCode(EMAIL, { after: again });
    const beforeResend = t.smtp.messages.length;
    await page.getByRole('button', { name: 'Send a new code' }).click();
    const code = await t.smtp.waitForCode(EMAIL, { after: beforeResend });
    await page.getByText('A new code is on its way').waitFor();
    if (first !== code) {
      await page.getByLabel('Code').fill(first);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('That code is not valid').waitFor();
    }
    await page.getByLabel('Code').fill(code);
    await shot('02-hosted-form-code');
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.waitForURL(`${t.consoleOrigin}/`);
    await page.locator('#email', { hasText: EMAIL }).waitFor();
    await page.getByRole('heading', { name: 'Acme Games' }).waitFor();
    await shot('03-signed-in-tenants');
    expect(await page.locator('.tenant h3').allTextContents()).toEqual(['Acme Games', 'Blue Moon Studio']);
    await expect(page.getByText('Not Mine').count()).resolves.toBe(0);
    await page.getByRole('link', { name: 'Acme Games' }).click();
    await page.getByRole('navigation', { name: 'Tenant' }).getByRole('link', { name: 'Clients' }).click();
    await page.getByRole('cell', { name: 'Acme Web Player', exact: true }).waitFor();
    expect(await page.locator('.client td:first-child').allTextContents()).toEqual(['Acme Mobile', 'Acme Web Player']);
    // The client table fits a 390 px phone screen: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('03b-signed-in-phone');
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 720 });

    // Spec 1.2: the browser holds only an HttpOnly cookie; scripts see no session or flow cookie.
    const visible = await page.evaluate<string>('document.cookie');
    expect(visible).not.toMatch(/svc_console|svc_control_flow/);
    const jar = await page.context().cookies(t.consoleOrigin);
    const sessionCookie = jar.find((c) => c.name === '__Host-svc_console');
    expect(sessionCookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/' });
    expect(jar.find((c) => c.name === '__Host-svc_control_flow')).toBeUndefined();
    // And nothing token-like is in the page or its storage.
    const exposed = await page.evaluate<string>(
      'document.documentElement.outerHTML + JSON.stringify(localStorage) + JSON.stringify(sessionStorage)',
    );
    expect(exposed).not.toMatch(/eyJ|ses_|refresh_token|access_token/);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await shot('04-signed-out-again');
    expect(await page.locator('.tenants').count()).toBe(0);
    expect(
      (await page.context().cookies(t.consoleOrigin)).find((c) => c.name === '__Host-svc_console'),
    ).toBeUndefined();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(problems).toEqual([]);
    // The replaced code's refusal, and nothing else: no missing icon or asset on either host.
    expect(failedLoads).toEqual(first === code ? [] : ['400 /management-auth/email/confirm']);
  }, 60_000);

  it.each([
    ['invalid_state', 'That sign-in link has expired'],
    ['sign_in_failed', 'Sign-in did not complete'],
    ['temporarily_unavailable', 'temporarily unavailable'],
    ['<script>alert(1)</script>', 'Something went wrong'],
  ])('shows /?error=%s in words', async (code, words) => {
    await page.goto(`${t.consoleOrigin}/?error=${encodeURIComponent(code)}`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(words);
    expect(new URL(page.url()).search).toBe('');
    if (code === 'invalid_state') await shot('05-error-invalid-state');
  });
});
