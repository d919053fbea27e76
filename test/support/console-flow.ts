import type { Response } from 'supertest';
import { sessionHandleOf } from '../../src/console-bff/console-sessions.store';
import type { ConsoleSessionState } from '../../src/console-bff/console-sessions.store';
import { open } from '../../src/platform/crypto/aead';
import type { ServiceUnderTest } from './service-agents';
import type { TestApp } from './test-app';

export const CONSOLE_COOKIE = '__Host-svc_console';
export const FLOW_COOKIE = '__Host-svc_control_flow';

export function setCookies(res: Response): string[] {
  return ([] as string[]).concat(res.headers['set-cookie'] ?? []);
}

/** The whole Set-Cookie line for one cookie name, or undefined. */
export function setCookieLine(res: Response, name: string): string | undefined {
  return setCookies(res).find((c) => c.startsWith(`${name}=`));
}

/** `name=value` from a Set-Cookie line, ready for a Cookie header. */
export function cookiePair(line: string | undefined): string {
  const pair = line?.split(';')[0];
  if (!pair) throw new Error('no such cookie was set');
  return pair;
}

export interface ConsoleStart {
  readonly authorizeUrl: URL;
  /** `__Host-svc_control_flow=<value>` of the console host. */
  readonly flowCookie: string;
}

/** POST /api/auth/start as the console page's form does. */
export async function consoleStart(t: ServiceUnderTest): Promise<ConsoleStart> {
  const res = await t.console().post('/api/auth/start').set('Origin', t.consoleOrigin).expect(303);
  return {
    authorizeUrl: new URL(res.headers.location as string),
    flowCookie: cookiePair(setCookieLine(res, FLOW_COOKIE)),
  };
}

/** The hosted sign-in form on the auth host: authorize, email code over SMTP, confirm. Returns redirect_to. */
export async function signInAtAuthHost(t: ServiceUnderTest, authorizeUrl: URL, email: string): Promise<URL> {
  const page = await t.auth().get(`${authorizeUrl.pathname}${authorizeUrl.search}`).expect(200);
  const flowId = /data-flow-id="(flw_[A-Za-z0-9_-]+)"/.exec(page.text)?.[1];
  const authFlowCookie = cookiePair(setCookieLine(page, FLOW_COOKIE));
  if (!flowId) throw new Error('authorize did not render the sign-in form');
  const after = t.smtp.messages.length;
  await t
    .auth()
    .post('/management-auth/email/start')
    .set('Origin', t.authOrigin)
    .set('Cookie', authFlowCookie)
    .send({ flow_id: flowId, email })
    .expect(202);
  const code = await t.smtp.waitForCode(email, { after });
  const confirmed = await t
    .auth()
    .post('/management-auth/email/confirm')
    .set('Origin', t.authOrigin)
    .set('Cookie', authFlowCookie)
    .send({ flow_id: flowId, email, code })
    .expect(200);
  return new URL(confirmed.body.redirect_to as string);
}

/** Follows redirect_to to the BFF callback with the given console-host cookie header. */
export function consoleCallback(t: ServiceUnderTest, redirectTo: URL, cookie: string | undefined) {
  const req = t.console().get(`${redirectTo.pathname}${redirectTo.search}`);
  return cookie === undefined ? req : req.set('Cookie', cookie);
}

export interface ConsoleSession {
  /** `__Host-svc_console=<value>`. */
  readonly cookie: string;
  readonly value: string;
  /** Redis key name (without the suite prefix) of the server-side record. */
  readonly recordKey: string;
  readonly setCookie: string;
}

/** A full console sign-in, as a browser does it, ending with the console session cookie. */
export async function consoleSignIn(t: ServiceUnderTest, email: string): Promise<ConsoleSession> {
  const start = await consoleStart(t);
  const redirectTo = await signInAtAuthHost(t, start.authorizeUrl, email);
  const res = await consoleCallback(t, redirectTo, start.flowCookie).expect(303);
  if (res.headers.location !== '/') throw new Error(`callback failed: ${String(res.headers.location)}`);
  const setCookie = setCookieLine(res, CONSOLE_COOKIE);
  const cookie = cookiePair(setCookie);
  const value = cookie.slice(CONSOLE_COOKIE.length + 1);
  return { cookie, value, recordKey: `cs:{${sessionHandleOf(value)}}`, setCookie: setCookie as string };
}

/** Opens the server-side record as the BFF does, for assertions about what it holds. */
export async function readConsoleRecord(t: TestApp, session: ConsoleSession): Promise<ConsoleSessionState | null> {
  const sealed = await t.redis.get(session.recordKey);
  if (sealed === null) return null;
  const plain = open(t.config.consoleSessionKey, sealed, `console-session:${session.recordKey}`);
  if (plain === null) throw new Error('record does not open');
  return JSON.parse(plain) as ConsoleSessionState;
}

/** Asserts a Set-Cookie line expires the console cookie (and nothing else of it is left). */
export function expiresConsoleCookie(res: Response): boolean {
  const line = setCookieLine(res, CONSOLE_COOKIE);
  return (
    line !== undefined &&
    /^__Host-svc_console=;/.test(line) &&
    (/Max-Age=0/.test(line) || /Expires=Thu, 01 Jan 1970/.test(line))
  );
}
