import type { Request, Response } from 'express';
import { expireHostCookie, readCookie, setHostCookie } from '../http/cookies';
import type { BindingCookie } from './browser-binding';
import { sendWithFlowCookie, type WithFlowCookie } from './browser-flows';

/**
 * The start's answer, for the chat platform and the OpenID Connect providers alike: the flow
 * cookie when the request started a flow, then on to the bounce.
 */
export function sendStart(res: Response, started: WithFlowCookie<{ location: string }>): void {
  res.redirect(302, sendWithFlowCookie(res, started).location);
}

/**
 * The bounce's answer, for the chat platform and the OpenID Connect providers alike: the
 * first-party binding cookie, then on to the sign-in page. Lax: the redirect back to the callback
 * is a top-level GET, which carries it.
 */
export function sendBounce(res: Response, bounce: { location: string; bindingCookie: BindingCookie }): void {
  const { name, value, maxAgeSeconds } = bounce.bindingCookie;
  setHostCookie(res, name, value, maxAgeSeconds, 'lax');
  res.redirect(302, bounce.location);
}

/** The callback's answer: the spent binding cookie expires, and the browser goes back to the game. */
export function sendCallbackResult(res: Response, result: { location: string; spentCookie?: string }): void {
  if (result.spentCookie) expireHostCookie(res, result.spentCookie, 'lax');
  res.redirect(302, result.location);
}

/** Reads one cookie of the request by name, once the callback's state has named it. */
export const cookieReader =
  (req: Request) =>
  (name: string): string | undefined =>
    readCookie(req.headers.cookie, name);
