import { HTTPS_IN_PRODUCTION, httpUrl, isCleartextOverNetwork } from '../config/secure-transport';
import type { ClientRecord } from './records';

/** A URL given for a client: its canonical form, or why it is refused. */
export type CheckedUrl = { readonly url: string } | { readonly problem: string };

/**
 * A redirect URI as a client registers it. Always refused: another scheme than http(s), a
 * fragment (RFC 6749 section 3.1.2: the endpoint URI must not include one; the service appends
 * `proof_id` and `code` to the query, and a fragment would hide them or smuggle its own), and
 * userinfo (`user:pass@host` names a host that readers of the URI misjudge, and carries a
 * credential). In production, cleartext http beyond loopback is refused too: the redirect
 * carries codes and proofs (issue 22, point 6).
 */
export function checkRedirectUri(value: string, production: boolean): CheckedUrl {
  const url = httpUrl(value);
  if (!url) return { problem: 'must be an http(s) URL' };
  // `URL` drops an empty fragment ("…/cb#") and an empty userinfo ("https://@host"): judge the text.
  if (value.includes('#')) return { problem: 'must not have a fragment (#…)' };
  if (url.username !== '' || url.password !== '' || /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value))
    return { problem: 'must not carry userinfo (user:password@)' };
  if (url.hostname.includes('*')) return { problem: WILDCARD };
  if (production && isCleartextOverNetwork(url)) return { problem: HTTPS_IN_PRODUCTION };
  return { url: url.toString() };
}

/**
 * `URL` takes `*` as a host character, but browsers never send such an Origin and a redirect to it
 * goes nowhere: a wildcard would look like it grants something while it grants nothing.
 */
const WILDCARD = 'must name its host exactly: no wildcard (*); register each host';

/**
 * A web origin as a client registers it (contract section 11): canonical, and in production not
 * cleartext beyond loopback, since CORS grants it credentialed calls (issue 22, point 6).
 */
export function checkWebOrigin(value: string, production: boolean): CheckedUrl {
  const origin = canonicalWebOrigin(value);
  if (origin === null) return { problem: 'is not an http(s) origin (scheme://host[:port])' };
  // Judged after parsing, which decodes `%2A` into the `*` a browser would never send either.
  if (origin.includes('*')) return { problem: WILDCARD };
  if (production && isCleartextOverNetwork(new URL(origin))) return { problem: HTTPS_IN_PRODUCTION };
  return { url: origin };
}

/**
 * The canonical origin of an `http(s)` URL given as an origin (scheme, host, optional port; no
 * path, query, fragment or credentials), or null. `https://Play.Example:443` becomes
 * `https://play.example`, the form browsers send in `Origin`, so a whole-string match suffices.
 */
export function canonicalWebOrigin(value: string): string | null {
  if (!/^https?:\/\/[^/?#@\s\\]+\/?$/i.test(value)) return null;
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}

/**
 * A browser client's web origins (contract section 11): the origins of its redirect URIs plus
 * the ones registered with `--web-origins`. Other client types have none.
 */
export function webOriginsOf(client: Pick<ClientRecord, 'type' | 'redirectUris' | 'webOrigins'>): string[] {
  if (client.type !== 'browser') return [];
  const origins = new Set<string>();
  for (const uri of client.redirectUris) {
    try {
      origins.add(new URL(uri).origin);
    } catch {
      // A redirect URI is validated when registered; an unparsable one names no origin.
    }
  }
  for (const origin of client.webOrigins) origins.add(origin);
  return [...origins];
}
