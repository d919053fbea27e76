import type { CookieOptions, Response } from 'express';

/**
 * `none` is only ever sent partitioned (CHIPS): a cross-site page's flow cookie lives in that
 * site's partition and is never shared with another top-level site (contract section 11).
 */
export type SameSite = 'strict' | 'lax' | 'none';

/**
 * Every cookie of the service is `__Host-` prefixed: Secure, HttpOnly, Path=/, no Domain
 * (contract section 8). SameSite=Lax on flow cookies because the sign-in form is reached by
 * a top-level redirect from the console; Strict on the console session cookie; None and
 * Partitioned on flow cookies set for a registered cross-site page.
 */
export function setHostCookie(
  res: Response,
  name: string,
  value: string,
  maxAgeSeconds: number,
  sameSite: SameSite,
): void {
  const opts: CookieOptions = {
    secure: true,
    httpOnly: true,
    path: '/',
    sameSite,
    maxAge: maxAgeSeconds * 1000,
    ...(sameSite === 'none' ? { partitioned: true } : {}),
  };
  res.cookie(name, value, opts);
}

/** Expires a cookie set by setHostCookie; `none` expires the partitioned one, as it was set. */
export function expireHostCookie(res: Response, name: string, sameSite: SameSite): void {
  res.cookie(name, '', {
    secure: true,
    httpOnly: true,
    path: '/',
    sameSite,
    maxAge: 0,
    expires: new Date(0),
    ...(sameSite === 'none' ? { partitioned: true } : {}),
  });
}

/**
 * Reads one cookie from the raw header without trusting a parsed object shape. Only the named
 * cookie is looked at, so the header's size is bounded by Node's header limit alone: a browser
 * that holds many cookies of other sites' scripts on this host (8 KiB is soon reached) still
 * presents its flow cookie (contract section 10).
 */
export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  let found: string | undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    if (found !== undefined) return undefined; // two cookies of one name: ambiguous, refuse
    found = part.slice(eq + 1).trim();
  }
  return found !== undefined && /^[A-Za-z0-9_.~-]{1,512}$/.test(found) ? found : undefined;
}
