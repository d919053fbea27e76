/** The console session cookie (spec 2.2): an opaque random id, nothing else. */
export const CONSOLE_COOKIE = '__Host-svc_console';
/**
 * The BFF's half of the sign-in flow (contract section 3): same name as the auth host's flow
 * cookie, but host-only on the console host, so the two never meet in one cookie jar.
 */
export const CONSOLE_FLOW_COOKIE = '__Host-svc_control_flow';
/** The pending sign-in lives as long as an email code (spec 2.3: 10 minutes); so does its cookie. */
export const PENDING_SIGN_IN_TTL_SECONDS = 600;
/** Spec 8: the console cookie expires within one day. */
export const CONSOLE_COOKIE_MAX_AGE_LIMIT_SECONDS = 86_400;

/** Cookie values minted by newSecret(): 32 random bytes, base64url. Anything else is not ours. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export function isCookieValue(value: string | undefined): value is string {
  return value !== undefined && COOKIE_VALUE.test(value);
}
