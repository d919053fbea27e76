import type { Page } from 'playwright-core';
import type { TestApp } from '../support/test-app';

/**
 * A console sign-in as a person does it in the browser: the console's Sign in button, the hosted
 * form on the auth host, the code from the test SMTP server, back on the console signed in.
 */
export async function signInToConsole(page: Page, t: TestApp, email: string): Promise<void> {
  await page.goto(`${t.consoleOrigin}/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(new RegExp(`^${t.authOrigin}/management-auth/authorize\\?`));
  await page.getByLabel('Email address').fill(email);
  const after = t.smtp.messages.length;
  await page.getByRole('button', { name: 'Send code' }).click();
  await page.getByLabel('Code').fill(await t.smtp.waitForCode(email, { after }));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${t.consoleOrigin}/`);
  await page.locator('#email', { hasText: email }).waitFor();
}
